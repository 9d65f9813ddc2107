#!/usr/bin/env python3
"""Counts executions of locked instructions in a callgrind profile (ffi/perf/locks.sh).

    lock_count.py CALLGRIND_OUT BATCH_FN MESSAGES_PER_CALL
    lock_count.py CALLGRIND_OUT - MESSAGES
    lock_count.py --syscalls CALLGRIND_OUT BATCH_FN MESSAGES_PER_CALL

The profile must come from `valgrind --tool=callgrind --dump-instr=yes
--toggle-collect=BATCH_FN`: every instruction's execution count, inside BATCH_FN only; with
`-`, from the whole run (set-up included), of MESSAGES messages in all. An
instruction is locked if objdump shows a `lock` prefix or an `xchg` with a memory operand
(implicitly locked on x86). Prints one line per locked instruction (executions per message,
object, function, instruction), the total per message and the instructions per message,
where messages = the calls of BATCH_FN times MESSAGES_PER_CALL. On x86 each locked read-modify-write is a full barrier that
costs ~20 cycles on a big Xeon: the count is the machine-independent figure behind it.

With --syscalls the profile comes from `--collect-systime=yes` without `--toggle-collect`
(callgrind counts system calls outside the toggled window too, and the cost lines it then writes
for calls made there throw the per-instruction addresses off): prints the system calls and
instructions per message from the inclusive cost of the calls of BATCH_FN. Under valgrind
`clock_gettime` is a system call (no vDSO), so a library that reads the clock per message
counts it here and not natively.
"""

import re
import subprocess
import sys
from collections import defaultdict


def parse(path, batch_fn):
    """Per (object, address): (function, count); and the number of calls of batch_fn."""
    names = {"ob": {}, "fn": {}, "cfn": {}}
    ob = fn = None
    addr = 0
    counts = defaultdict(int)
    where = {}
    batch_calls = 0
    skip_next = False
    pending_cfn = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^(ob|fl|fi|fe|fn|cob|cfi|cfl|cfn)=(?:\((\d+)\))?\s*(.*)$", line)
            if m:
                kind, ident, name = m.groups()
                table = {"ob": "ob", "cob": "ob", "fn": "fn", "cfn": "fn"}.get(kind)
                if table and ident is not None:
                    if name:
                        names[table][ident] = name
                    name = names[table].get(ident, name)
                if kind == "ob":
                    ob = name
                elif kind == "fn":
                    fn = name
                elif kind == "cfn":
                    pending_cfn = name
                continue
            if line.startswith("calls="):
                if pending_cfn == batch_fn:
                    batch_calls += int(line.split("=")[1].split()[0])
                skip_next = True  # the next line is the call's inclusive cost
                continue
            if not (line[0] in "+-*0123456789"):
                continue  # headers (events:, summary:, totals: ...)
            fields = line.split()
            pos = fields[0]
            if pos.startswith("0x"):
                addr = int(pos, 16)
            elif pos.startswith("+"):
                addr += int(pos[1:], 16) if pos[1:].startswith("0x") else int(pos[1:])
            elif pos.startswith("-"):
                addr -= int(pos[1:], 16) if pos[1:].startswith("0x") else int(pos[1:])
            elif pos != "*":
                addr = int(pos)
            if skip_next:
                skip_next = False
                pending_cfn = None
                continue
            if len(fields) >= 3:
                counts[(ob, addr)] += int(fields[2])
                where[(ob, addr)] = fn
    return counts, where, batch_calls


def locked_addresses(obj):
    """Address -> instruction text for every locked instruction of an object file."""
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", obj], capture_output=True, text=True, check=False
    ).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(.*)$", line)
        if not m:
            continue
        text = m.group(2).strip()
        if text.startswith("lock ") or (text.startswith("xchg") and "(" in text):
            found[int(m.group(1), 16)] = " ".join(text.split())
    return found


def syscalls(path, batch_fn, per_call):
    """Prints system calls and instructions per message, inclusive of BATCH_FN's calls."""
    names = {}
    columns = events = None
    callee = None
    calls = ir = sys_count = 0
    in_call = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("positions:"):
                columns = len(line.split()) - 1
            elif line.startswith("events:"):
                events = line.split()[1:]
            elif m := re.match(r"^cfn=\((\d+)\)\s*(.*)$", line):
                ident, name = m.groups()
                if name:
                    names[ident] = name
                callee = names.get(ident)
            elif line.startswith("calls="):
                in_call = callee == batch_fn
                if in_call:
                    calls += int(line.split("=")[1].split()[0])
            elif in_call:
                # The call's inclusive cost: positions, then the events in header order.
                fields = line.split()
                costs = fields[columns:] + ["0"] * len(events)
                ir += int(costs[events.index("Ir")])
                sys_count += int(costs[events.index("sysCount")])
                in_call = False
    if calls == 0 or events is None or "sysCount" not in events:
        sys.exit(f"lock_count: no calls of {batch_fn}, or no sysCount, in {path}")
    messages = calls * per_call
    print(f"{sys_count / messages:8.3f}  system calls per message ({messages} messages)")
    print(f"{ir / messages:8.1f}  instructions per message")


def main():
    if sys.argv[1] == "--syscalls":
        syscalls(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    path, batch_fn, per_call = sys.argv[1], sys.argv[2], int(sys.argv[3])
    counts, where, calls = parse(path, batch_fn)
    if batch_fn == "-":
        calls = 1
    if calls == 0:
        sys.exit(f"lock_count: no calls of {batch_fn} in {path}")
    messages = calls * per_call
    objects = {ob for ob, _ in counts if ob}
    rows = []
    for obj in sorted(objects):
        locked = locked_addresses(obj)
        for (ob, addr), n in counts.items():
            if ob == obj and addr in locked and n > 0:
                rows.append((n / messages, obj.rsplit("/", 1)[-1], where[(ob, addr)], locked[addr]))
    rows.sort(reverse=True)
    total = 0.0
    for per, obj, fn, insn in rows:
        total += per
        if per >= 0.005:
            print(f"{per:8.3f}  {obj:16.16s} {fn[:90]:90s} {insn}")
    print(f"{total:8.3f}  locked instructions per message ({messages} messages)")
    print(f"{sum(counts.values()) / messages:8.1f}  instructions per message")


if __name__ == "__main__":
    main()
