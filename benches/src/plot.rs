//! Throughput against message size, one SVG per transport, one panel per pattern, every library
//! on the same axes.

use plotters::prelude::*;

use crate::report::Row;

const COLORS: [RGBColor; 3] = [
    RGBColor(200, 60, 20),
    RGBColor(30, 90, 200),
    RGBColor(40, 150, 60),
];

/// Writes `dir/throughput-<transport>.svg` for every transport in `rows`; returns the paths.
pub fn throughput_svgs(
    rows: &[Row],
    libraries: &[&'static str],
    dir: &std::path::Path,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut transports: Vec<&str> = rows.iter().map(|r| r.transport).collect();
    transports.sort_unstable();
    transports.dedup();
    let mut written = Vec::new();
    for transport in transports {
        let path = dir.join(format!("throughput-{transport}.svg"));
        let mut patterns: Vec<&str> = rows
            .iter()
            .filter(|r| r.transport == transport)
            .map(|r| r.pattern)
            .collect();
        patterns.dedup();
        let root = SVGBackend::new(&path, (1200, 760)).into_drawing_area();
        root.fill(&WHITE)?;
        let root = root.titled(
            &format!("{transport}: throughput (MB/s) against message size (bytes)"),
            ("sans-serif", 20),
        )?;
        let cols = 3;
        let panels = root.split_evenly((patterns.len().div_ceil(cols).max(1), cols));
        for (panel, pattern) in panels.iter().zip(&patterns) {
            let points = |lib: &str| -> Vec<(f64, f64)> {
                rows.iter()
                    .filter(|r| r.transport == transport && r.pattern == *pattern)
                    .filter_map(|r| {
                        r.throughput
                            .iter()
                            .find(|(n, ..)| *n == lib)
                            .map(|(_, _, mb)| (r.size as f64, mb.max(0.01)))
                    })
                    .collect()
            };
            let all: Vec<(f64, f64)> = libraries.iter().flat_map(|l| points(l)).collect();
            let (xmin, xmax) = all
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
            let ymax = all.iter().fold(1.0f64, |m, p| m.max(p.1));
            if all.is_empty() {
                continue;
            }
            let mut chart = ChartBuilder::on(panel)
                .caption(*pattern, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(28)
                .y_label_area_size(50)
                .build_cartesian_2d(
                    (xmin * 0.8..xmax * 1.25).log_scale(),
                    (0.5f64..ymax * 2.0).log_scale(),
                )?;
            chart.configure_mesh().x_labels(6).y_labels(6).draw()?;
            for (i, lib) in libraries.iter().enumerate() {
                let color = COLORS[i % COLORS.len()];
                let pts = points(lib);
                chart
                    .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                    .label(*lib)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                    });
                chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperLeft)
                .draw()?;
        }
        root.present()?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

/// Writes the scale bench's plot: one panel per case, ns per message against the number of
/// peers, both axes logarithmic, one line per series (library and transport). `points` are
/// `(case, series, peers, ns per message)`.
pub fn scale_svg(
    points: &[(&str, String, usize, f64)],
    path: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    const SERIES_COLORS: [RGBColor; 4] = [
        RGBColor(200, 60, 20),
        RGBColor(30, 90, 200),
        RGBColor(240, 150, 40),
        RGBColor(90, 170, 230),
    ];
    // Cases in order of first appearance.
    let mut cases: Vec<&str> = Vec::new();
    for p in points {
        if !cases.contains(&p.0) {
            cases.push(p.0);
        }
    }
    let mut series: Vec<&str> = points.iter().map(|p| p.1.as_str()).collect();
    series.sort_unstable();
    series.dedup();
    let root = SVGBackend::new(path, (1200, 760)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "ns per message against the number of peers on one socket",
        ("sans-serif", 20),
    )?;
    let cols = 3;
    let panels = root.split_evenly((cases.len().div_ceil(cols).max(1), cols));
    for (panel, case) in panels.iter().zip(&cases) {
        let line = |s: &str| -> Vec<(f64, f64)> {
            points
                .iter()
                .filter(|p| p.0 == *case && p.1 == s)
                .map(|p| (p.2 as f64, p.3.max(1.0)))
                .collect()
        };
        let all: Vec<(f64, f64)> = series.iter().flat_map(|s| line(s)).collect();
        if all.is_empty() {
            continue;
        }
        let xmax = all.iter().fold(1.0f64, |m, p| m.max(p.0));
        let (ymin, ymax) = all
            .iter()
            .fold((f64::MAX, 1.0f64), |(a, b), p| (a.min(p.1), b.max(p.1)));
        let mut chart = ChartBuilder::on(panel)
            .caption(*case, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(56)
            .build_cartesian_2d(
                (0.8f64..xmax * 1.25).log_scale(),
                (ymin * 0.5..ymax * 2.0).log_scale(),
            )?;
        // No mesh: on log axes spanning several decades it is thousands of lines.
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(5)
            .y_labels(5)
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let color = SERIES_COLORS[i % SERIES_COLORS.len()];
            let pts = line(s);
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(*s)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
