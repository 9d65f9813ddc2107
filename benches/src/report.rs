//! Turning matrix rows into the Markdown tables, the CSV and the plot.

use std::fmt::Write as _;

/// One measured row: medians over the repetitions for each library, by name.
#[derive(Clone, Debug)]
pub struct Row {
    pub pattern: &'static str,
    pub transport: &'static str,
    pub size: usize,
    /// (library, msgs/s, MB/s)
    pub throughput: Vec<(&'static str, f64, f64)>,
    /// (library, mean us, p50 us, p99 us), one way
    pub latency: Vec<(&'static str, f64, f64, f64)>,
}

/// Median of a non-empty sample (NaN when empty).
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Percentage by which `ours` beats `theirs`, for a figure where higher is better.
pub fn gain_higher(ours: f64, theirs: f64) -> f64 {
    (ours - theirs) / theirs * 100.0
}

/// Percentage by which `ours` beats `theirs`, for a figure where lower is better.
pub fn gain_lower(ours: f64, theirs: f64) -> f64 {
    (theirs - ours) / theirs * 100.0
}

fn lookup<T: Copy>(v: &[(&'static str, T)], name: &str) -> Option<T> {
    v.iter().find(|(n, _)| *n == name).map(|(_, x)| *x)
}

fn size_label(size: usize) -> String {
    if size >= 1024 && size.is_multiple_of(1024) {
        format!("{} KiB", size / 1024)
    } else {
        format!("{size} B")
    }
}

/// Markdown: one section per pattern, a throughput table and a latency table in each.
/// Each of `extras` (zmq.rs, ferromq's async API) adds that library's msg/s and latency as a
/// further column ("-" in the cells it did not run).
pub fn markdown(rows: &[Row], ours: &str, theirs: &str, extras: &[&str], header: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{header}\n");
    let mut patterns: Vec<&str> = rows.iter().map(|r| r.pattern).collect();
    patterns.dedup();
    for pattern in patterns {
        let _ = writeln!(out, "### {pattern}\n");
        let _ = writeln!(
            out,
            "| transport | size | {ours} msg/s | {theirs} msg/s | {ours} MB/s | {theirs} MB/s | diff % |{}",
            extra_header(extras, "msg/s")
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|{}",
            extra_rule(extras)
        );
        for r in rows.iter().filter(|r| r.pattern == pattern) {
            let t_all: Vec<(&str, (f64, f64))> = r
                .throughput
                .iter()
                .map(|(n, a, b)| (*n, (*a, *b)))
                .collect();
            let (Some(o), Some(t)) = (lookup(&t_all, ours), lookup(&t_all, theirs)) else {
                continue;
            };
            let extra = extra_cells(extras, |n| lookup(&t_all, n).map(|x| format!("{:.0}", x.0)));
            let _ = writeln!(
                out,
                "| {} | {} | {:.0} | {:.0} | {:.1} | {:.1} | {:+.1} |{}",
                r.transport,
                size_label(r.size),
                o.0,
                t.0,
                o.1,
                t.1,
                gain_higher(o.0, t.0),
                extra
            );
        }
        let _ = writeln!(
            out,
            "\n| transport | size | {ours} us | {theirs} us | {ours} p50/p99 | {theirs} p50/p99 | diff % |{}",
            extra_header(extras, "us")
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|{}",
            extra_rule(extras)
        );
        for r in rows.iter().filter(|r| r.pattern == pattern) {
            let l: Vec<(&str, (f64, f64, f64))> = r
                .latency
                .iter()
                .map(|(n, a, b, c)| (*n, (*a, *b, *c)))
                .collect();
            let (Some(o), Some(t)) = (lookup(&l, ours), lookup(&l, theirs)) else {
                continue;
            };
            let extra = extra_cells(extras, |n| lookup(&l, n).map(|x| format!("{:.1}", x.0)));
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} | {:.1} | {:.1}/{:.1} | {:.1}/{:.1} | {:+.1} |{}",
                r.transport,
                size_label(r.size),
                o.0,
                t.0,
                o.1,
                o.2,
                t.1,
                t.2,
                gain_lower(o.0, t.0),
                extra
            );
        }
        out.push('\n');
    }
    out
}

fn extra_header(extras: &[&str], unit: &str) -> String {
    extras.iter().map(|n| format!(" {n} {unit} |")).collect()
}

fn extra_rule(extras: &[&str]) -> String {
    "---:|".repeat(extras.len())
}

/// The extra libraries' cells: each one's figure, "-" where it did not run.
fn extra_cells(extras: &[&str], figure: impl Fn(&str) -> Option<String>) -> String {
    extras
        .iter()
        .map(|n| format!(" {} |", figure(n).unwrap_or_else(|| "-".into())))
        .collect()
}

/// CSV, one line per library per row.
pub fn csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "pattern,transport,size,library,msgs_per_sec,mb_per_sec,lat_mean_us,lat_p50_us,lat_p99_us\n",
    );
    for r in rows {
        // Every library with a figure in the row, throughput or latency (NaN for the other).
        let mut libs: Vec<&str> = r.throughput.iter().map(|t| t.0).collect();
        for l in &r.latency {
            if !libs.contains(&l.0) {
                libs.push(l.0);
            }
        }
        for lib in libs {
            let thr = r.throughput.iter().find(|t| t.0 == lib);
            let (msgs, mb) = thr.map_or((f64::NAN, f64::NAN), |t| (t.1, t.2));
            let lat = r.latency.iter().find(|l| l.0 == lib);
            let (mean, p50, p99) = lat.map_or((f64::NAN, f64::NAN, f64::NAN), |l| (l.1, l.2, l.3));
            let _ = writeln!(
                out,
                "{},{},{},{},{:.0},{:.2},{:.2},{:.2},{:.2}",
                r.pattern, r.transport, r.size, lib, msgs, mb, mean, p50, p99
            );
        }
    }
    out
}

/// Replaces the text between two marker lines of `doc` (or appends the block with its markers).
pub fn splice(doc: &str, begin: &str, end: &str, block: &str) -> String {
    match (doc.find(begin), doc.find(end)) {
        (Some(b), Some(e)) if b < e => {
            format!("{}{begin}\n{block}{}", &doc[..b], &doc[e..])
        }
        _ => format!("{doc}\n{begin}\n{block}{end}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn gains_are_positive_when_ours_is_better() {
        assert!((gain_higher(150.0, 100.0) - 50.0).abs() < 1e-9);
        assert!((gain_lower(5.0, 10.0) - 50.0).abs() < 1e-9);
        assert!(gain_lower(20.0, 10.0) < 0.0);
    }

    #[test]
    fn splice_replaces_between_markers_and_appends_otherwise() {
        let doc = "a\n<!-- b -->\nold\n<!-- e -->\nz\n";
        assert_eq!(
            splice(doc, "<!-- b -->", "<!-- e -->", "new\n"),
            "a\n<!-- b -->\nnew\n<!-- e -->\nz\n"
        );
        assert_eq!(splice("x\n", "B", "E", "n\n"), "x\n\nB\nn\nE\n");
    }

    fn row(third_thr: bool) -> Row {
        let mut throughput = vec![("ferromq", 200.0, 2.0), ("libzmq", 100.0, 1.0)];
        if third_thr {
            throughput.push(("zmq.rs", 50.0, 0.5));
        }
        Row {
            pattern: "DEALER_DEALER",
            transport: "tcp",
            size: 64,
            throughput,
            latency: vec![
                ("ferromq", 10.0, 9.0, 20.0),
                ("libzmq", 20.0, 18.0, 40.0),
                ("zmq.rs", 30.0, 27.0, 60.0),
            ],
        }
    }

    #[test]
    fn third_library_gets_a_column_and_a_dash_where_it_did_not_run() {
        let md = markdown(&[row(true)], "ferromq", "libzmq", &["zmq.rs"], "h");
        assert!(md.contains("| diff % | zmq.rs msg/s |"));
        assert!(md.contains("| +100.0 | 50 |"));
        assert!(md.contains("| +50.0 | 30.0 |"));
        let md = markdown(&[row(false)], "ferromq", "libzmq", &["zmq.rs"], "h");
        assert!(md.contains("| +100.0 | - |"));
        let two = markdown(&[row(true)], "ferromq", "libzmq", &[], "h");
        assert!(!two.contains("zmq.rs"));
    }

    #[test]
    fn each_extra_library_gets_its_own_column_in_order() {
        let mut r = row(true);
        r.throughput.push(("ferromq async", 150.0, 1.5));
        let md = markdown(&[r], "ferromq", "libzmq", &["zmq.rs", "ferromq async"], "h");
        assert!(md.contains("| zmq.rs msg/s | ferromq async msg/s |"));
        assert!(md.contains("| +100.0 | 50 | 150 |"));
        // No latency figure for the async column: a dash in its place.
        assert!(md.contains("| +50.0 | 30.0 | - |"));
    }

    #[test]
    fn csv_lists_a_library_with_latency_only() {
        let out = csv(&[row(false)]);
        assert!(out.contains("DEALER_DEALER,tcp,64,zmq.rs,NaN,NaN,30.00,27.00,60.00"));
        assert!(out.contains("DEALER_DEALER,tcp,64,ferromq,200,2.00,10.00,9.00,20.00"));
    }
}
