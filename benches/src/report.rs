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
    if size >= 1024 && size % 1024 == 0 {
        format!("{} KiB", size / 1024)
    } else {
        format!("{size} B")
    }
}

/// Markdown: one section per pattern, a throughput table and a latency table in each.
pub fn markdown(rows: &[Row], ours: &str, theirs: &str, header: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{header}\n");
    let mut patterns: Vec<&str> = rows.iter().map(|r| r.pattern).collect();
    patterns.dedup();
    for pattern in patterns {
        let _ = writeln!(out, "### {pattern}\n");
        let _ = writeln!(
            out,
            "| transport | size | {ours} msg/s | {theirs} msg/s | {ours} MB/s | {theirs} MB/s | diff % |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
        for r in rows.iter().filter(|r| r.pattern == pattern) {
            let t: Vec<(&str, (f64, f64))> = r
                .throughput
                .iter()
                .map(|(n, a, b)| (*n, (*a, *b)))
                .collect();
            let (Some(o), Some(t)) = (lookup(&t, ours), lookup(&t, theirs)) else {
                continue;
            };
            let _ = writeln!(
                out,
                "| {} | {} | {:.0} | {:.0} | {:.1} | {:.1} | {:+.1} |",
                r.transport,
                size_label(r.size),
                o.0,
                t.0,
                o.1,
                t.1,
                gain_higher(o.0, t.0)
            );
        }
        let _ = writeln!(
            out,
            "\n| transport | size | {ours} us | {theirs} us | {ours} p50/p99 | {theirs} p50/p99 | diff % |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
        for r in rows.iter().filter(|r| r.pattern == pattern) {
            let l: Vec<(&str, (f64, f64, f64))> = r
                .latency
                .iter()
                .map(|(n, a, b, c)| (*n, (*a, *b, *c)))
                .collect();
            let (Some(o), Some(t)) = (lookup(&l, ours), lookup(&l, theirs)) else {
                continue;
            };
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} | {:.1} | {:.1}/{:.1} | {:.1}/{:.1} | {:+.1} |",
                r.transport,
                size_label(r.size),
                o.0,
                t.0,
                o.1,
                o.2,
                t.1,
                t.2,
                gain_lower(o.0, t.0)
            );
        }
        out.push('\n');
    }
    out
}

/// CSV, one line per library per row.
pub fn csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "pattern,transport,size,library,msgs_per_sec,mb_per_sec,lat_mean_us,lat_p50_us,lat_p99_us\n",
    );
    for r in rows {
        for (lib, msgs, mb) in &r.throughput {
            let lat = r.latency.iter().find(|(n, ..)| n == lib);
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
}
