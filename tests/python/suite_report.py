"""Reads the JUnit files of suite.sh's pytest runs and compares the sides.

  suite_report.py [--known FILE] [--csv OUT] [--check] [--retry XML] SIDE=XML...
      prints each side's counts, the tests that pass on the control and fail on ferromq (with
      the first line of the failure), and in --check mode fails (exit 1) when a ferromq test
      outside FILE fails or a test listed in FILE passes
  suite_report.py --failed-unknown --known FILE ferromq=XML
      prints the node ids of ferromq's failures outside FILE, one a line (suite.sh runs them again)
"""

import csv
import sys
import xml.etree.ElementTree as ET


def node_id(case):
    """pytest's node id (tests/test_x.py::Class::name) from a JUnit testcase."""
    parts = [p for p in case.get("classname", "").split(".") if p]
    name = case.get("name", "")
    if not parts:  # a module collected with an error or skipped as a whole: name is the module
        return name.replace(".", "/") + ".py"
    # classname is tests.test_x[.Class]: the module is the first part named test_*.
    i = next((k for k, p in enumerate(parts) if p.startswith("test_")), len(parts) - 1)
    return "::".join(["/".join(parts[: i + 1]) + ".py", *parts[i + 1 :], name])


def outcomes(path):
    """node id -> (outcome, detail); a test failing in call and teardown is one failure."""
    result = {}
    for case in ET.parse(path).iter("testcase"):
        nid = node_id(case)
        outcome, detail = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                detail = (child.get("message") or "").splitlines()[0:1]
                detail = detail[0] if detail else ""
                break
            if child.tag == "skipped":
                outcome, detail = "skipped", child.get("message") or ""
        previous = result.get(nid)
        if previous is None or previous[0] in ("passed", "skipped"):
            result[nid] = (outcome, detail)
    return result


def known_failures(path):
    known = {}
    if path:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    name, _, why = line.partition(" ")
                    known[name] = why.strip()
    return known


def bad(outcome):
    return outcome in ("failed", "error")


def main(argv):
    known_path = csv_path = retry_path = None
    check = failed_unknown = False
    sides = {}
    args = iter(argv)
    for arg in args:
        if arg == "--known":
            known_path = next(args)
        elif arg == "--csv":
            csv_path = next(args)
        elif arg == "--retry":
            retry_path = next(args)
        elif arg == "--check":
            check = True
        elif arg == "--failed-unknown":
            failed_unknown = True
        elif "=" in arg:
            side, _, path = arg.partition("=")
            sides[side] = outcomes(path)
        else:
            sys.exit(f"unexpected argument {arg}")
    known = known_failures(known_path)
    ferro = sides["ferromq"]

    if failed_unknown:
        for nid, (outcome, _) in sorted(ferro.items()):
            if bad(outcome) and nid not in known:
                print(nid)
        return 0

    if retry_path:
        for nid, (outcome, detail) in outcomes(retry_path).items():
            first = ferro.get(nid)
            if first and bad(first[0]):
                ferro[nid] = (outcome + " (retried)", detail or first[1])

    for side, result in sides.items():
        counts = {}
        for outcome, _ in result.values():
            key = outcome.split(" ")[0]
            counts[key] = counts.get(key, 0) + 1
        print(f"{side}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))

    for nid, (outcome, detail) in sorted(ferro.items()):
        if outcome.endswith("(retried)"):
            print(f"ferromq, {outcome.split()[0]} on the retry: {nid} (first: {detail})")

    control = sides.get("control")
    if control is not None:
        diverging = [
            (nid, ferro[nid][1])
            for nid, (outcome, _) in sorted(control.items())
            if outcome == "passed" and nid in ferro and bad(ferro[nid][0].split(" ")[0])
        ]
        print(f"pass on the control, fail on ferromq: {len(diverging)}")
        for nid, detail in diverging:
            print(f"  {nid}: {detail}")

    if csv_path:
        names = sorted(set().union(*(r.keys() for r in sides.values())))
        with open(csv_path, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["test", *sides])
            for nid in names:
                out.writerow([nid, *(r.get(nid, ("not run", ""))[0] for r in sides.values())])

    status = 0
    if check:
        for nid, (outcome, detail) in sorted(ferro.items()):
            outcome = outcome.split(" ")[0]
            if bad(outcome) and nid not in known:
                print(f"NEW FAILURE {nid}: {detail}")
                status = 1
            elif outcome == "passed" and nid in known:
                print(f"KNOWN FAILURE NOW PASSES {nid} (remove it from the known-failures list)")
                status = 1
        for nid in known:
            if nid not in ferro:
                print(f"KNOWN FAILURE NOT RUN {nid} (renamed or deselected?)")
                status = 1
        print("check: " + ("FAILED" if status else "ok"))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
