//! The comparison matrix: ferromq against libzmq, side by side in one run.
//!
//! `cargo bench -p ferromq-benches --bench compare` runs the quick mode (64 B and 64 KiB, every
//! pattern and transport); `-- --full` runs all six sizes. Each cell is measured `--reps` times
//! per library, alternating the libraries' order, and the median is reported. Results go to
//! docs/performance.md (between the matrix markers), docs/perf/matrix.csv and one SVG plot per
//! transport in docs/perf/. `-- --only ferromq` (or `libzmq`) runs one library alone, for a
//! profiler (`perf record`), and writes no docs. `-- --zeromq` adds the pure-Rust zmq.rs as a
//! third column on the cells it supports (no PAIR, no poll, no inproc) and writes its tables
//! to their own block (`matrix-zeromq`) and CSV, leaving the two-library matrix alone.
//! `-- --async` adds ferromq's async API (`AsyncSocket`) as two further columns: each loop a
//! `tokio::spawn`ed task on a multi-thread tokio runtime as zmq.rs's are, and each loop one
//! `block_on` on a current-thread runtime per socket; a run with it writes to the `matrix-async` block and CSV, so `--async --zeromq` puts
//! blocking ferromq, async ferromq, libzmq and zmq.rs side by side.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use ferromq_benches::backend::{Backend, BenchResult};
use ferromq_benches::libzmq::Libzmq;
use ferromq_benches::matrix::{latency, throughput, Latency, Pattern, Throughput, Transport};
use ferromq_benches::report::{self, median, Row};
use ferromq_benches::zeromq::Zeromq;
use ferromq_benches::{ferromq::Ferromq, ferromq_async::FerromqAsync, plot};

const QUICK_SIZES: [usize; 2] = [64, 65536];
const FULL_SIZES: [usize; 6] = [64, 256, 1024, 65536, 131072, 262144];

struct Options {
    full: bool,
    reps: usize,
    patterns: Vec<Pattern>,
    transports: Vec<Transport>,
    sizes: Vec<usize>,
    out_dir: PathBuf,
    write_docs: bool,
    /// Indices into NAMES of the libraries to run (`--only NAME` for profiling one of them).
    libs: Vec<usize>,
    /// zmq.rs is in the run (`--zeromq`, or `--only zmq.rs`).
    zeromq: bool,
    /// ferromq's async API is in the run (`--async`, or `--only "ferromq async"`).
    async_api: bool,
}

fn parse_args() -> Options {
    let mut o = Options {
        full: false,
        reps: 3,
        patterns: Pattern::ALL.to_vec(),
        transports: Transport::ALL.to_vec(),
        sizes: Vec::new(),
        out_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs"),
        write_docs: true,
        libs: vec![FERROMQ, LIBZMQ],
        zeromq: false,
        async_api: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--full" => o.full = true,
            "--quick" => o.full = false,
            "--reps" => o.reps = args.next().and_then(|v| v.parse().ok()).unwrap_or(3).max(1),
            "--no-docs" => o.write_docs = false,
            "--zeromq" => {
                o.zeromq = true;
                o.libs.push(ZEROMQ);
            }
            "--async" => {
                o.async_api = true;
                o.libs.extend([ASYNC, ASYNC_CT]);
            }
            "--out-dir" => {
                if let Some(v) = args.next() {
                    o.out_dir = PathBuf::from(v);
                }
            }
            "--patterns" => {
                let v = args.next().unwrap_or_default().to_uppercase();
                o.patterns = Pattern::ALL
                    .into_iter()
                    .filter(|p| v.split(',').any(|n| n == p.name()))
                    .collect();
            }
            "--transports" => {
                let v = args.next().unwrap_or_default().to_lowercase();
                o.transports = Transport::ALL
                    .into_iter()
                    .filter(|t| v.split(',').any(|n| n == t.name()))
                    .collect();
            }
            "--sizes" => {
                o.sizes = args
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .filter_map(|s| s.parse().ok())
                    .collect();
            }
            "--only" => {
                let v = args.next().unwrap_or_default().to_lowercase();
                o.libs = (0..NAMES.len())
                    .filter(|&i| NAMES[i].eq_ignore_ascii_case(&v))
                    .collect();
                o.zeromq = o.libs.contains(&ZEROMQ);
                o.async_api = o.libs.contains(&ASYNC) || o.libs.contains(&ASYNC_CT);
                // A one-library run is for a profiler, not for the tables.
                o.write_docs = false;
            }
            // cargo bench passes --bench; criterion-style filters are not used here.
            _ => {}
        }
    }
    if o.sizes.is_empty() {
        o.sizes = if o.full {
            FULL_SIZES.to_vec()
        } else {
            QUICK_SIZES.to_vec()
        };
    }
    o
}

/// Message counts sized so one throughput run takes a fifth of a second or more on a 2-core
/// machine (inproc moves small messages fastest, so it gets twice as many): long enough that
/// connection set-up, scheduler hiccups and allocator contention average out, short enough
/// that the quick mode (42 cells, 3 repetitions per library) ends in about three minutes there
/// (115 s on 2026-11-23 at commit 2d876bd; the issue allows four).
///
/// Messages above 1 MiB (`--sizes 268435456`, issue 14's large-message row) move 1 GiB per
/// throughput run, at least 3 messages, and time 2 round trips for latency: what matters there
/// is the per-byte path (read buffers, copies), and each message is already seconds of work.
fn counts(size: usize, transport: Transport, full: bool) -> (usize, usize) {
    let scale = if full { 2 } else { 1 };
    if size > 1 << 20 {
        return (((1 << 30) / size).max(3) * scale, 2 * scale);
    }
    let speed = if transport == Transport::Inproc { 2 } else { 1 };
    let thr = (96_000_000 / size).clamp(3_000, 600_000) * scale * speed;
    let lat = if size <= 1024 { 5_000 } else { 1_000 } * scale;
    (thr, lat)
}

struct Libraries {
    ferromq: Ferromq,
    libzmq: Libzmq,
    /// Made only for a run that includes it.
    zeromq: Option<Zeromq>,
    /// Made only for a run that includes them.
    ferromq_async: Option<(FerromqAsync<false>, FerromqAsync<true>)>,
}

const NAMES: [&str; 5] = [
    Ferromq::NAME,
    Libzmq::NAME,
    Zeromq::NAME,
    FerromqAsync::<false>::NAME,
    FerromqAsync::<true>::NAME,
];
const FERROMQ: usize = 0;
const LIBZMQ: usize = 1;
const ZEROMQ: usize = 2;
const ASYNC: usize = 3;
const ASYNC_CT: usize = 4;

/// Whether library `lib` runs the cell at all.
fn runs(lib: usize, p: Pattern, t: Transport) -> bool {
    match lib {
        ZEROMQ => Zeromq::supports(p, t),
        ASYNC | ASYNC_CT => FerromqAsync::<false>::supports(p),
        _ => true,
    }
}

impl Libraries {
    fn throughput(
        &self,
        lib: usize,
        p: Pattern,
        t: Transport,
        size: usize,
        n: usize,
    ) -> BenchResult<Throughput> {
        match (lib, &self.zeromq, &self.ferromq_async) {
            (FERROMQ, ..) => throughput(&self.ferromq, p, t, size, n),
            (ZEROMQ, Some(z), _) => throughput(z, p, t, size, n),
            (ASYNC, _, Some(a)) => throughput(&a.0, p, t, size, n),
            (ASYNC_CT, _, Some(a)) => throughput(&a.1, p, t, size, n),
            _ => throughput(&self.libzmq, p, t, size, n),
        }
    }

    fn latency(
        &self,
        lib: usize,
        p: Pattern,
        t: Transport,
        size: usize,
        n: usize,
    ) -> BenchResult<Latency> {
        match (lib, &self.zeromq, &self.ferromq_async) {
            (FERROMQ, ..) => latency(&self.ferromq, p, t, size, n),
            (ZEROMQ, Some(z), _) => latency(z, p, t, size, n),
            (ASYNC, _, Some(a)) => latency(&a.0, p, t, size, n),
            (ASYNC_CT, _, Some(a)) => latency(&a.1, p, t, size, n),
            _ => latency(&self.libzmq, p, t, size, n),
        }
    }
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} vCPU, {cpu}, unpinned")
}

fn main() {
    let o = parse_args();
    let zeromq = if o.zeromq { Some(Zeromq::new()) } else { None };
    let ferromq_async = if o.async_api {
        Some(FerromqAsync::new().and_then(|a| Ok((a, FerromqAsync::new()?))))
    } else {
        None
    };
    let libs = match (
        Ferromq::new(),
        Libzmq::new(),
        zeromq.transpose(),
        ferromq_async.transpose(),
    ) {
        (Ok(ferromq), Ok(libzmq), Ok(zeromq), Ok(ferromq_async)) => Libraries {
            ferromq,
            libzmq,
            zeromq,
            ferromq_async,
        },
        (Err(e), ..) | (_, Err(e), ..) | (_, _, Err(e), _) | (.., Err(e)) => {
            eprintln!("cannot create contexts: {e}");
            std::process::exit(1);
        }
    };
    let cells = o.patterns.len() * o.transports.len() * o.sizes.len();
    eprintln!(
        "comparison matrix: {} mode, {cells} cells x {} libraries x {} reps, throughput + latency",
        if o.full { "full" } else { "quick" },
        o.libs.len(),
        o.reps
    );
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut failures = 0usize;
    let mut cell = 0;
    for &pattern in &o.patterns {
        for &transport in &o.transports {
            for &size in &o.sizes {
                cell += 1;
                let (thr_n, lat_n) = counts(size, transport, o.full);
                // REQ/REP throughput is counted in round trips: size it like latency.
                let thr_n = if pattern == Pattern::ReqRep {
                    lat_n
                } else {
                    thr_n
                };
                let mut thr: Vec<Vec<Throughput>> = vec![Vec::new(); NAMES.len()];
                let mut lat: Vec<Vec<Latency>> = vec![Vec::new(); NAMES.len()];
                for rep in 0..o.reps {
                    // Rotate which library goes first: A B, B A, ... (A B C, B C A, C A B ...
                    // with three).
                    let mut order: Vec<usize> = o
                        .libs
                        .iter()
                        .copied()
                        .filter(|&lib| runs(lib, pattern, transport))
                        .collect();
                    if !order.is_empty() {
                        let turn = rep % order.len();
                        order.rotate_left(turn);
                    }
                    for &lib in &order {
                        let thr_result = if lib == ZEROMQ && !Zeromq::measures_throughput(pattern) {
                            None
                        } else {
                            Some(libs.throughput(lib, pattern, transport, size, thr_n))
                        };
                        match thr_result {
                            None => {}
                            Some(Ok(r)) => thr[lib].push(r),
                            Some(Err(e)) => {
                                failures += 1;
                                eprintln!(
                                    "  {} thr {}/{}/{size}: {e}",
                                    NAMES[lib],
                                    pattern.name(),
                                    transport.name()
                                );
                            }
                        }
                        match libs.latency(lib, pattern, transport, size, lat_n) {
                            Ok(r) => lat[lib].push(r),
                            Err(e) => {
                                failures += 1;
                                eprintln!(
                                    "  {} lat {}/{}/{size}: {e}",
                                    NAMES[lib],
                                    pattern.name(),
                                    transport.name()
                                );
                            }
                        }
                    }
                }
                let mut row = Row {
                    pattern: pattern.name(),
                    transport: transport.name(),
                    size,
                    throughput: Vec::new(),
                    latency: Vec::new(),
                };
                for (lib, name) in NAMES.iter().enumerate() {
                    if !thr[lib].is_empty() {
                        let mut m: Vec<f64> = thr[lib].iter().map(|r| r.msgs_per_sec).collect();
                        let mut b: Vec<f64> = thr[lib].iter().map(|r| r.mb_per_sec).collect();
                        row.throughput.push((name, median(&mut m), median(&mut b)));
                    }
                    if !lat[lib].is_empty() {
                        let mut a: Vec<f64> = lat[lib].iter().map(|r| r.mean_us).collect();
                        let mut p5: Vec<f64> = lat[lib].iter().map(|r| r.p50_us).collect();
                        let mut p9: Vec<f64> = lat[lib].iter().map(|r| r.p99_us).collect();
                        row.latency
                            .push((name, median(&mut a), median(&mut p5), median(&mut p9)));
                    }
                }
                let show = |v: &[(&str, f64, f64)]| {
                    v.iter()
                        .map(|(n, m, _)| format!("{n} {:.0} msg/s", m))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let show_lat = |v: &[(&str, f64, f64, f64)]| {
                    v.iter()
                        .map(|(n, m, ..)| format!("{n} {:.1} us", m))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                eprintln!(
                    "[{cell}/{cells} {:.0}s] {}/{}/{size}: {} | {}",
                    started.elapsed().as_secs_f64(),
                    pattern.name(),
                    transport.name(),
                    show(&row.throughput),
                    show_lat(&row.latency)
                );
                let _ = std::io::stderr().flush();
                rows.push(row);
            }
        }
    }
    // The command as run, so a partial run (`--patterns`, `--sizes`) says which one it was.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let header = format!(
        "Measured {} by `cargo bench -p ferromq-benches --bench compare{}` on {}; median of {} \
         runs per library, interleaved; libzmq is 4.3.4 as bundled by the `zmq` crate. \
         Throughput: msg/s and MB/s, diff % = (ferromq - libzmq) / libzmq. Latency: one way \
         (round trip / 2) mean in us, p50/p99, diff % = (libzmq - ferromq) / libzmq. Positive diff \
         means ferromq is better.",
        today(),
        if args.is_empty() {
            String::new()
        } else {
            format!(" -- {}", args.join(" "))
        },
        machine(),
        o.reps
    );
    let mut extras = Vec::new();
    let mut header = header;
    if o.zeromq {
        extras.push(NAMES[ZEROMQ]);
        header.push_str(
            " The zmq.rs column is the `zeromq` crate 0.7 on a multi-thread tokio runtime with two \
             workers, on the cells it supports: a throughput run's send and receive loops and \
             latency's echo and timing loops are `tokio::spawn`ed tasks, other calls one \
             `block_on` each.",
        );
    }
    if o.async_api {
        extras.extend([NAMES[ASYNC], NAMES[ASYNC_CT]]);
        header.push_str(
            " The ferromq async columns are `ferromq::AsyncSocket`: `ferromq async` on one \
             multi-thread tokio runtime with two workers, a throughput run's send and receive \
             loops and latency's echo and timing loops `tokio::spawn`ed tasks that own their \
             sockets, the harness threads only joining them (PUB/SUB's latency, whose warm-up \
             the harness drives, and set-up are one `block_on` per call); `ferromq async ct` on \
             a current-thread runtime per socket, each loop one `block_on`.",
        );
    }
    let md = report::markdown(&rows, NAMES[FERROMQ], NAMES[LIBZMQ], &extras, &header);
    println!("{md}");
    if o.write_docs {
        let perf_dir = o.out_dir.join("perf");
        let _ = std::fs::create_dir_all(&perf_dir);
        let mode = match (o.async_api, o.zeromq, o.full) {
            (true, ..) => "async",
            (false, true, _) => "zeromq",
            (false, false, true) => "full",
            (false, false, false) => "quick",
        };
        let csv_path = perf_dir.join(format!("matrix-{mode}.csv"));
        if let Err(e) = std::fs::write(&csv_path, report::csv(&rows)) {
            eprintln!("cannot write {}: {e}", csv_path.display());
        }
        // The plots show the two-library matrix only.
        if !o.zeromq && !o.async_api {
            match plot::throughput_svgs(&rows, &NAMES[..2], &perf_dir) {
                Ok(paths) => eprintln!("plots: {}", paths.join(", ")),
                Err(e) => eprintln!("cannot draw plots: {e}"),
            }
        }
        let doc_path = o.out_dir.join("performance.md");
        let doc = std::fs::read_to_string(&doc_path).unwrap_or_else(|_| "# Performance\n".into());
        let begin = format!("<!-- matrix-{mode}:begin -->");
        let end = format!("<!-- matrix-{mode}:end -->");
        let new = report::splice(&doc, &begin, &end, &md);
        if let Err(e) = std::fs::write(&doc_path, new) {
            eprintln!("cannot write {}: {e}", doc_path.display());
        }
        eprintln!("wrote {} and {}", doc_path.display(), csv_path.display());
    }
    eprintln!(
        "done in {:.0}s, {failures} failed runs",
        started.elapsed().as_secs_f64()
    );
    if failures > 0 {
        std::process::exit(2);
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
