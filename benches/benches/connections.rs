//! What an idle tcp connection costs a server, and whether one event's cost grows with the number
//! of connections (issue 15), ferromq and libzmq 4.3.4 in the same run.
//!
//! A ROUTER (its peers DEALERs) or a PULL (its peers PUSHes) is bound in one process, the
//! server; N peers connect to it from client processes (at most 1,000 sockets each, so neither
//! side runs out of descriptors and libzmq's 1,023 sockets per context are never reached). Each
//! peer sends one hello, so the server has seen every handshake finish. Then, with every
//! connection idle:
//!
//! - the server's VmRSS and descriptor count (/proc/self/fd) before the first connection and
//!   after the last, and the difference per connection; the clients' too (all processes);
//! - the cost of one event through one of the N connections: for the ROUTER a round trip (the
//!   first DEALER sends, the ROUTER answers, the DEALER receives; every message is its own
//!   wake-up on both I/O threads), for the PULL a stream of messages from the first PUSH, in
//!   ns per message, wall time and the server process's CPU time (all its threads, from
//!   getrusage) per event; median of several batches.
//!
//! Every measurement runs in a fresh server process (the bench re-runs itself with `--server`),
//! so no library inherits the other's heap. The soft descriptor limit is raised to the hard
//! one in every process.
//!
//! ```text
//! cargo bench -p ferromq-benches --bench connections -- --quick   # N = 1, 100, 1,000
//! cargo bench -p ferromq-benches --bench connections              # and 10,000; writes docs
//! ```
//!
//! The full run writes docs/perf/connections.csv and the table between the `connections`
//! markers of docs/performance.md; `--quick` and `--peers 1,10000` print only.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use ferromq_benches::backend::{Backend, BenchError, BenchResult, Kind};
use ferromq_benches::ferromq::Ferromq;
use ferromq_benches::libzmq::Libzmq;
use ferromq_benches::proc_status_kib;
use ferromq_benches::report::{median, splice};

const BODY: [u8; 16] = *b"0123456789abcdef";
/// Sockets per client process.
const PER_CLIENT: usize = 1_000;
/// Peers that connect before the server confirms them (libzmq's listen backlog is 100).
const CHUNK: usize = 100;

fn fail(what: impl Into<String>) -> BenchError {
    BenchError(what.into())
}

/// Raises the soft RLIMIT_NOFILE to the hard limit: 10,000 connections need more than the
/// usual 1,024 on the server.
fn raise_nofile() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the one rlimit struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// User plus system CPU time of this process, all threads, in ns.
fn cpu_ns() -> u64 {
    // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the one struct we own.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn routing_id(i: usize) -> Vec<u8> {
    format!("peer-{i:05}").into_bytes()
}

/// The server's case: its socket type and its peers'.
#[derive(Clone, Copy)]
enum Case {
    Router,
    Pull,
}

impl Case {
    fn name(self) -> &'static str {
        match self {
            Case::Router => "router",
            Case::Pull => "pull",
        }
    }
    fn parse(s: &str) -> Option<Case> {
        [Case::Router, Case::Pull]
            .into_iter()
            .find(|c| c.name() == s)
    }
    fn server(self) -> Kind {
        match self {
            Case::Router => Kind::Router,
            Case::Pull => Kind::Pull,
        }
    }
    fn peer(self) -> Kind {
        match self {
            Case::Router => Kind::Dealer,
            Case::Pull => Kind::Push,
        }
    }
}

/// One client process as the server sees it: commands in, lines out.
struct Client {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Client {
    fn spawn(
        lib: &str,
        case: Case,
        endpoint: &str,
        first: usize,
        count: usize,
    ) -> BenchResult<Self> {
        let exe = std::env::current_exe().map_err(|e| fail(format!("current_exe: {e}")))?;
        let mut child = Command::new(exe)
            .args(["--client", lib, case.name(), endpoint])
            .arg(first.to_string())
            .arg(count.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("spawn client: {e}")))?;
        let input = child.stdin.take().ok_or_else(|| fail("client stdin"))?;
        let output = child.stdout.take().ok_or_else(|| fail("client stdout"))?;
        Ok(Client {
            child,
            input,
            output: BufReader::new(output),
        })
    }

    fn say(&mut self, line: &str) -> BenchResult<()> {
        writeln!(self.input, "{line}")
            .and_then(|()| self.input.flush())
            .map_err(|e| fail(format!("to client: {e}")))
    }

    fn hear(&mut self) -> BenchResult<String> {
        let mut line = String::new();
        match self.output.read_line(&mut line) {
            Ok(0) => Err(fail("client exited")),
            Ok(_) => Ok(line.trim().to_owned()),
            Err(e) => Err(fail(format!("from client: {e}"))),
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.say("quit");
        let _ = self.child.wait();
    }
}

/// What one server process measured.
struct Row {
    library: String,
    case: &'static str,
    peers: usize,
    rss_before_kib: u64,
    rss_after_kib: u64,
    fds_before: usize,
    fds_after: usize,
    client_rss_kib: u64,
    client_fds: usize,
    /// Wall time per round trip (ROUTER) or per message (PULL).
    ns_per_event: f64,
    /// The server process's CPU time (every thread: the I/O thread's and the socket's) per
    /// round trip or message: the work an event costs, without the waits between processes
    /// that dominate the wall time on a loaded machine.
    cpu_ns_per_event: f64,
}

/// Receives one hello (ROUTER: routing id and body).
fn recv_hello<B: Backend>(case: Case, s: &mut B::Socket) -> BenchResult<()> {
    if let Case::Router = case {
        let (_, more) = B::recv(s)?;
        if !more {
            return Err(fail("routing id without a body"));
        }
    }
    let (len, more) = B::recv(s)?;
    if (len, more) != (BODY.len(), false) {
        return Err(fail(format!("unexpected frame ({len} bytes, more {more})")));
    }
    Ok(())
}

fn server<B: Backend>(case: Case, peers: usize, batch: usize, rounds: usize) -> BenchResult<Row> {
    let ctx = B::new()?;
    let mut socket = ctx.socket(case.server(), 1000)?;
    if let Case::Router = case {
        B::set_router_mandatory(&mut socket)?;
    }
    let endpoint = B::bind(&mut socket, "tcp://127.0.0.1:*")?;
    std::thread::sleep(Duration::from_millis(200));
    let rss_before_kib = proc_status_kib("VmRSS");
    let fds_before = open_fds();

    let mut clients = Vec::new();
    for first in (0..peers).step_by(PER_CLIENT) {
        let count = PER_CLIENT.min(peers - first);
        let mut client = Client::spawn(B::NAME, case, &endpoint, first, count)?;
        for chunk in (0..count).step_by(CHUNK) {
            let line = client.hear()?;
            if line != "chunk" {
                return Err(fail(format!("client said {line:?}")));
            }
            for _ in chunk..(chunk + CHUNK).min(count) {
                recv_hello::<B>(case, &mut socket)?;
            }
            client.say("go")?;
        }
        clients.push(client);
    }
    // Idle: let the I/O threads settle, then look.
    std::thread::sleep(Duration::from_millis(1000));
    let rss_after_kib = proc_status_kib("VmRSS");
    let fds_after = open_fds();
    let mut client_rss_kib = 0;
    let mut client_fds = 0;
    for c in &mut clients {
        c.say("stat")?;
        let line = c.hear()?;
        let mut f = line.split(' ').map(|v| v.parse::<u64>().unwrap_or(0));
        client_rss_kib += f.next().unwrap_or(0);
        client_fds += f.next().unwrap_or(0) as usize;
    }

    let active = clients.first_mut().ok_or_else(|| fail("no client"))?;
    let id = routing_id(0);
    let mut samples = Vec::new();
    let mut cpu_samples = Vec::new();
    for _ in 0..rounds {
        let cpu_start = cpu_ns();
        match case {
            Case::Router => {
                active.say(&format!("ping {batch}"))?;
                for _ in 0..batch {
                    recv_hello::<B>(case, &mut socket)?;
                    if !B::send(&mut socket, &id, true)? {
                        return Err(fail("peer 0 unreachable"));
                    }
                    B::send(&mut socket, &BODY, false)?;
                }
                let ns: f64 = active
                    .hear()?
                    .parse()
                    .map_err(|_| fail("bad round-trip time"))?;
                samples.push(ns / batch as f64);
            }
            Case::Pull => {
                let start = Instant::now();
                active.say(&format!("burst {batch}"))?;
                for _ in 0..batch {
                    recv_hello::<B>(case, &mut socket)?;
                }
                samples.push(start.elapsed().as_nanos() as f64 / batch as f64);
                active.hear()?;
            }
        }
        cpu_samples.push((cpu_ns() - cpu_start) as f64 / batch as f64);
    }
    drop(clients);
    drop(socket);
    drop(ctx);
    Ok(Row {
        library: B::NAME.to_owned(),
        case: case.name(),
        peers,
        rss_before_kib,
        rss_after_kib,
        fds_before,
        fds_after,
        client_rss_kib,
        client_fds,
        ns_per_event: median(&mut samples),
        cpu_ns_per_event: median(&mut cpu_samples),
    })
}

/// A client process: `count` peers with routing ids from `first`, connected CHUNK at a time as
/// the server confirms them, then commands from stdin until `quit`.
fn client<B: Backend>(case: Case, endpoint: &str, first: usize, count: usize) -> BenchResult<()> {
    let ctx = B::new()?;
    let mut sockets = Vec::with_capacity(count);
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut out = std::io::stdout();
    let mut say = |line: &str| -> BenchResult<()> {
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| fail(format!("to server: {e}")))
    };
    for chunk in (0..count).step_by(CHUNK) {
        for i in chunk..(chunk + CHUNK).min(count) {
            let mut s = ctx.socket(case.peer(), 1000)?;
            if let Case::Router = case {
                B::set_routing_id(&mut s, &routing_id(first + i))?;
            }
            B::connect(&mut s, endpoint)?;
            B::send(&mut s, &BODY, false)?;
            sockets.push(s);
        }
        say("chunk")?;
        match lines.next() {
            Some(Ok(l)) if l == "go" => {}
            other => return Err(fail(format!("server said {other:?}"))),
        }
    }
    for line in lines {
        let line = line.map_err(|e| fail(format!("from server: {e}")))?;
        let mut words = line.split(' ');
        let cmd = words.next().unwrap_or("");
        let n: usize = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        let s = sockets.first_mut().ok_or_else(|| fail("no socket"))?;
        match cmd {
            "stat" => say(&format!("{} {}", proc_status_kib("VmRSS"), open_fds()))?,
            "ping" => {
                let start = Instant::now();
                for _ in 0..n {
                    B::send(s, &BODY, false)?;
                    let (len, more) = B::recv(s)?;
                    if (len, more) != (BODY.len(), false) {
                        return Err(fail("bad reply"));
                    }
                }
                say(&start.elapsed().as_nanos().to_string())?;
            }
            "burst" => {
                for _ in 0..n {
                    B::send(s, &BODY, false)?;
                }
                say("sent")?;
            }
            _ => break,
        }
    }
    drop(sockets);
    drop(ctx);
    Ok(())
}

fn run_server(lib: &str, case: Case, peers: usize, quick: bool) -> BenchResult<Row> {
    let (batch, rounds) = match (case, quick) {
        (Case::Router, true) => (2_000, 3),
        (Case::Router, false) => (5_000, 7),
        (Case::Pull, true) => (20_000, 3),
        (Case::Pull, false) => (50_000, 7),
    };
    match lib {
        "ferromq" => server::<Ferromq>(case, peers, batch, rounds),
        "libzmq" => server::<Libzmq>(case, peers, batch, rounds),
        _ => Err(fail(format!("unknown library {lib}"))),
    }
}

fn row_line(r: &Row) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{},{:.0},{:.0}",
        r.case,
        r.library,
        r.peers,
        r.rss_before_kib,
        r.rss_after_kib,
        r.fds_before,
        r.fds_after,
        r.client_rss_kib,
        r.client_fds,
        r.ns_per_event,
        r.cpu_ns_per_event
    )
}

fn parse_row(line: &str) -> Option<Row> {
    let f: Vec<&str> = line.split(',').collect();
    let case = match *f.first()? {
        "router" => "router",
        "pull" => "pull",
        _ => return None,
    };
    Some(Row {
        case,
        library: (*f.get(1)?).to_owned(),
        peers: f.get(2)?.parse().ok()?,
        rss_before_kib: f.get(3)?.parse().ok()?,
        rss_after_kib: f.get(4)?.parse().ok()?,
        fds_before: f.get(5)?.parse().ok()?,
        fds_after: f.get(6)?.parse().ok()?,
        client_rss_kib: f.get(7)?.parse().ok()?,
        client_fds: f.get(8)?.parse().ok()?,
        ns_per_event: f.get(9)?.parse().ok()?,
        cpu_ns_per_event: f.get(10)?.parse().ok()?,
    })
}

const CSV_HEADER: &str = "case,library,peers,rss_before_kib,rss_after_kib,fds_before,fds_after,client_rss_kib,client_fds,ns_per_event,cpu_ns_per_event";

fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| case | library | N | server RSS | RSS / conn | server fds | fds / conn | \
         clients' RSS / peer | clients' fds / peer | wall ns / event | server CPU ns / event | \
         CPU vs N=1 |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let n = r.peers as f64;
        let rss_per = (r.rss_after_kib as f64 - r.rss_before_kib as f64) / n;
        let fds_per = (r.fds_after as f64 - r.fds_before as f64) / n;
        let base = rows
            .iter()
            .find(|o| o.case == r.case && o.library == r.library && o.peers == 1)
            .map(|o| o.cpu_ns_per_event);
        let _ = write!(
            s,
            "| {} | {} | {} | {:.1} MiB | {:.1} KiB | {} | {:.2} | {:.1} KiB | {:.2} | {:.0} | {:.0} |",
            r.case,
            r.library,
            r.peers,
            r.rss_after_kib as f64 / 1024.0,
            rss_per,
            r.fds_after,
            fds_per,
            r.client_rss_kib as f64 / n,
            r.client_fds as f64 / n,
            r.ns_per_event,
            r.cpu_ns_per_event
        );
        match base {
            Some(b) if b > 0.0 => {
                let _ = writeln!(s, " {:.2}x |", r.cpu_ns_per_event / b);
            }
            _ => s.push_str(" |\n"),
        }
    }
    s
}

fn main() {
    raise_nofile();
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
    let result = match arg(1) {
        "--client" => {
            let (first, count) = (arg(5).parse().unwrap_or(0), arg(6).parse().unwrap_or(0));
            match (arg(2), Case::parse(arg(3))) {
                ("ferromq", Some(case)) => client::<Ferromq>(case, arg(4), first, count),
                ("libzmq", Some(case)) => client::<Libzmq>(case, arg(4), first, count),
                _ => Err(fail("usage: --client LIB CASE ENDPOINT FIRST COUNT")),
            }
        }
        "--server" => match Case::parse(arg(3)) {
            Some(case) => run_server(arg(2), case, arg(4).parse().unwrap_or(1), arg(5) == "quick")
                .map(|r| println!("{}", row_line(&r))),
            None => Err(fail("usage: --server LIB CASE N quick|full")),
        },
        _ => orchestrate(&args),
    };
    if let Err(e) = result {
        eprintln!("connections: {e}");
        std::process::exit(1);
    }
}

/// Runs every (case, N, library) in its own server process and reports.
fn orchestrate(args: &[String]) -> BenchResult<()> {
    let quick = args.iter().any(|a| a == "--quick");
    let mut peers = if quick {
        vec![1, 100, 1_000]
    } else {
        vec![1, 100, 1_000, 10_000]
    };
    let only = args
        .iter()
        .position(|a| a == "--peers")
        .and_then(|i| args.get(i + 1));
    if let Some(list) = only {
        peers = list.split(',').filter_map(|n| n.parse().ok()).collect();
    }
    let exe = std::env::current_exe().map_err(|e| fail(format!("current_exe: {e}")))?;
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut failed = false;
    for case in [Case::Router, Case::Pull] {
        for &n in &peers {
            for lib in ["ferromq", "libzmq"] {
                let out = Command::new(&exe)
                    .args(["--server", lib, case.name(), &n.to_string()])
                    .arg(if quick { "quick" } else { "full" })
                    .stderr(Stdio::inherit())
                    .output()
                    .map_err(|e| fail(format!("spawn server: {e}")))?;
                let text = String::from_utf8_lossy(&out.stdout);
                match text.lines().find_map(parse_row) {
                    Some(row) if out.status.success() => {
                        eprintln!("{}", row_line(&row));
                        rows.push(row);
                    }
                    _ => {
                        eprintln!("FAILED {lib} {} N={n}: {}", case.name(), out.status);
                        failed = true;
                    }
                }
            }
        }
    }
    let table = table(&rows);
    println!("{table}");
    if !quick && only.is_none() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        let mut csv = format!("{CSV_HEADER}\n");
        for r in &rows {
            csv.push_str(&row_line(r));
            csv.push('\n');
        }
        let csv_path = docs.join("perf/connections.csv");
        if let Err(e) = std::fs::write(&csv_path, csv) {
            eprintln!("cannot write {}: {e}", csv_path.display());
        }
        let doc_path = docs.join("performance.md");
        match std::fs::read_to_string(&doc_path) {
            Ok(doc) => {
                let doc = splice(
                    &doc,
                    "<!-- connections:begin -->",
                    "<!-- connections:end -->",
                    &table,
                );
                if let Err(e) = std::fs::write(&doc_path, doc) {
                    eprintln!("cannot write {}: {e}", doc_path.display());
                }
            }
            Err(e) => eprintln!("cannot read {}: {e}", doc_path.display()),
        }
    }
    eprintln!("connections: {:.1} s", started.elapsed().as_secs_f64());
    if failed {
        Err(fail("some runs failed"))
    } else {
        Ok(())
    }
}
