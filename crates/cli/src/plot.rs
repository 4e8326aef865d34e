//! Bar charts for `sift bench --plot`, drawn with plotters into SVG.
//!
//! One group of bars per filter, one bar per engine (the same colour for an engine in every
//! group), the value on a linear axis from 0.

use std::path::Path;

use plotters::prelude::*;

/// Draws `groups` (a label and its `(series, value)` bars) into the SVG file at `path`.
pub fn bars(
    path: &Path,
    y_label: &str,
    groups: &[(String, Vec<(&str, f64)>)],
) -> anyhow::Result<()> {
    let mut series: Vec<&str> = Vec::new();
    for (_, bars) in groups {
        for (name, _) in bars {
            if !series.contains(name) {
                series.push(name);
            }
        }
    }
    let max = groups.iter().flat_map(|(_, b)| b.iter().map(|(_, v)| *v)).fold(0.0, f64::max);
    let slots = series.len().max(1) + 1; // one empty slot between groups
    let width = (groups.len() * slots * 28 + 160).max(640) as u32;
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = (groups.len() * slots) as f64;
    let mut chart = ChartBuilder::on(&root)
        .margin(16)
        .x_label_area_size(60)
        .y_label_area_size(60)
        // Head room above the tallest bar for the legend.
        .build_cartesian_2d(0.0..n, 0.0..(max * 1.4).max(1e-9))?;
    chart.configure_mesh().disable_x_mesh().x_labels(0).y_desc(y_label).draw()?;
    // Each group's label under the middle of its bars (about 7 pixels a character).
    for (gi, (name, _)) in groups.iter().enumerate() {
        let centre = (gi * slots) as f64 + (slots - 1) as f64 / 2.0;
        let (x, y) = chart.backend_coord(&(centre, 0.0));
        let label = shorten(name);
        let half = 7 * label.chars().count() as i32 / 2;
        root.draw(&Text::new(label, (x - half, y + 10), ("sans-serif", 13).into_font()))?;
    }
    for (si, name) in series.iter().enumerate() {
        let color = Palette99::pick(si).to_rgba();
        let rects = groups.iter().enumerate().filter_map(|(gi, (_, bars))| {
            let v = bars.iter().find(|(n, _)| n == name)?.1;
            let x = (gi * slots + si) as f64;
            Some(Rectangle::new([(x + 0.1, 0.0), (x + 0.9, v)], color.filled()))
        });
        chart
            .draw_series(rects)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// A label short enough for the axis.
fn shorten(s: &str) -> String {
    if s.chars().count() <= 28 {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(27).collect::<String>())
    }
}
