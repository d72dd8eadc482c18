//! `mcp-conform quality`'s reports: the console tables, JSON (every query
//! with the rank of each expected item), Markdown tables, and a
//! self-contained HTML page whose charts are inline SVG (no script at all).
//! Reporters only read a [`QualityReport`].

use std::fmt::Write as _;

use crate::quality::measure::{rank_distribution, QualityReport, SurfaceReport, RANK_BUCKETS};
use crate::quality::metrics::Figure;

fn fig(f: &Figure) -> String {
    format!("{:.2} [{:.2}, {:.2}]", f.mean, f.low, f.high)
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1} ms"))
}

fn heading(r: &QualityReport) -> String {
    format!(
        "{} ({}, {}), {} queries, seed {}",
        r.target, r.transport, r.protocol_version, r.query_set, r.seed
    )
}

fn surface_title(s: &SurfaceReport) -> String {
    format!(
        "{}: {} queries over {} {} (relevance: {})",
        s.surface.label(),
        s.queries.len(),
        s.items,
        s.feature.plural(),
        s.requirement
    )
}

/// Every metric as (name, server, baseline).
fn rows(s: &SurfaceReport) -> Vec<(&'static str, Figure, Figure)> {
    match (&s.server, &s.baseline) {
        (Some(a), Some(b)) => a
            .named()
            .into_iter()
            .zip(b.named())
            .map(|((n, x), (_, y))| (n, x, y))
            .collect(),
        _ => Vec::new(),
    }
}

/// The console text: one table per surface, then the surfaces not offered.
pub fn console(r: &QualityReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mcp-conform quality: {}", heading(r));
    if r.nothing_to_measure() {
        let _ = writeln!(
            out,
            "\nnothing to measure: the server offers no search surface"
        );
    }
    for s in &r.surfaces {
        let _ = writeln!(out, "\n{}", surface_title(s));
        let _ = writeln!(
            out,
            "  {:<10} {:<20} {:<20}",
            "metric", "server", "BM25 baseline"
        );
        for (name, a, b) in rows(s) {
            let _ = writeln!(out, "  {name:<10} {:<20} {:<20}", fig(&a), fig(&b));
        }
        let _ = writeln!(
            out,
            "  latency    p50 {} · p95 {}",
            ms(s.latency_p50_ms),
            ms(s.latency_p95_ms)
        );
        if !s.by_kind.is_empty() {
            let kinds: Vec<String> = s
                .by_kind
                .iter()
                .map(|k| {
                    format!(
                        "{} ({}) {:.2} / {:.2}",
                        k.kind, k.queries, k.server.mrr.mean, k.baseline.mrr.mean
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "  MRR by query kind, server / BM25: {}",
                kinds.join(" · ")
            );
        }
        if s.failed > 0 {
            let first = s
                .queries
                .iter()
                .find_map(|q| q.error.as_deref())
                .unwrap_or("");
            let _ = writeln!(out, "  {} queries got no answer (first: {first})", s.failed);
        }
        if !s.unknown_names.is_empty() {
            let _ = writeln!(
                out,
                "  not in the server's catalog (never found): {}",
                s.unknown_names.join(", ")
            );
        }
    }
    if !r.absent.is_empty() {
        let _ = writeln!(out, "\nnot offered:");
        for a in &r.absent {
            let _ = writeln!(out, "  {}: {}", a.surface.label(), a.reason);
        }
    }
    out
}

/// The JSON report (format `mcp-conform/quality@1`).
pub fn json(r: &QualityReport) -> String {
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}")) + "\n"
}

/// Markdown: a table per surface.
pub fn markdown(r: &QualityReport) -> String {
    let mut out = format!("# Search quality\n\n{}\n", heading(r).replace('|', "\\|"));
    if r.nothing_to_measure() {
        out.push_str("\nNothing to measure: the server offers no search surface.\n");
    }
    for s in &r.surfaces {
        let _ = writeln!(out, "\n## {}\n", surface_title(s));
        out.push_str("| metric | server | BM25 baseline |\n|---|---|---|\n");
        for (name, a, b) in rows(s) {
            let _ = writeln!(out, "| {name} | {} | {} |", fig(&a), fig(&b));
        }
        let _ = writeln!(
            out,
            "| latency p50 / p95 | {} / {} | |",
            ms(s.latency_p50_ms),
            ms(s.latency_p95_ms)
        );
    }
    if !r.absent.is_empty() {
        out.push_str("\nNot offered:\n\n");
        for a in &r.absent {
            let _ = writeln!(out, "- {}: {}", a.surface.label(), a.reason);
        }
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const SERVER_COLOUR: &str = "#2b7bb9";
const BASELINE_COLOUR: &str = "#9aa1ad";

/// One surface's charts as one SVG: server vs baseline per metric (grouped
/// bars with their intervals), and where the first relevant item ranked.
pub fn surface_svg(s: &SurfaceReport) -> String {
    let (w, h) = (720.0, 250.0);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="quality-chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="system-ui,sans-serif" font-size="11" role="img" aria-label="{}">"#,
        escape(&format!("{}: server vs BM25", s.surface.label()))
    );
    let _ = write!(
        svg,
        r##"<rect width="{w}" height="{h}" fill="#fff"/><text x="10" y="16" font-size="13" font-weight="600">{}</text>"##,
        escape(&surface_title(s))
    );
    let (top, bottom) = (40.0, 200.0);
    let scale = bottom - top;
    // Left: metrics, 0..1.
    for (i, (name, a, b)) in rows(s).iter().enumerate() {
        let x = 40.0 + i as f64 * 64.0;
        for (j, (f, colour, class)) in [
            (a, SERVER_COLOUR, "server"),
            (b, BASELINE_COLOUR, "baseline"),
        ]
        .into_iter()
        .enumerate()
        {
            let bx = x + j as f64 * 22.0;
            let bh = f.mean.clamp(0.0, 1.0) * scale;
            let _ = write!(
                svg,
                r#"<rect class="bar {class}" x="{bx:.1}" y="{:.1}" width="20" height="{bh:.1}" fill="{colour}"><title>{name} {class}: {}</title></rect>"#,
                bottom - bh,
                fig(f)
            );
            let (lo, hi) = (
                bottom - f.low.clamp(0.0, 1.0) * scale,
                bottom - f.high.clamp(0.0, 1.0) * scale,
            );
            let _ = write!(
                svg,
                r##"<line x1="{:.1}" x2="{:.1}" y1="{lo:.1}" y2="{hi:.1}" stroke="#1d1f23"/>"##,
                bx + 10.0,
                bx + 10.0
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{name}</text>"#,
            x + 21.0,
            bottom + 14.0
        );
    }
    let _ = write!(
        svg,
        r##"<line x1="36" x2="360" y1="{bottom}" y2="{bottom}" stroke="#555"/><text x="32" y="{bottom}" text-anchor="end">0</text><text x="32" y="{}" text-anchor="end">1</text>"##,
        top + 4.0
    );
    // Right: rank distribution.
    let server = rank_distribution(&s.queries, false);
    let base = rank_distribution(&s.queries, true);
    let most = server
        .iter()
        .chain(&base)
        .copied()
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let _ = write!(
        svg,
        r#"<text x="400" y="34">first relevant item at rank (queries)</text>"#
    );
    for (i, bucket) in RANK_BUCKETS.iter().enumerate() {
        let x = 400.0 + i as f64 * 52.0;
        for (j, (count, colour, class)) in [
            (server[i], SERVER_COLOUR, "server"),
            (base[i], BASELINE_COLOUR, "baseline"),
        ]
        .into_iter()
        .enumerate()
        {
            let bh = count as f64 / most * scale;
            let _ = write!(
                svg,
                r#"<rect class="rank {class}" x="{:.1}" y="{:.1}" width="20" height="{bh:.1}" fill="{colour}"><title>rank {bucket}, {class}: {count}</title></rect>"#,
                x + j as f64 * 22.0,
                bottom - bh
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{bucket}</text>"#,
            x + 21.0,
            bottom + 14.0
        );
    }
    let _ = write!(
        svg,
        r##"<line x1="396" x2="712" y1="{bottom}" y2="{bottom}" stroke="#555"/><rect x="40" y="{y}" width="10" height="10" fill="{SERVER_COLOUR}"/><text x="54" y="{ty}">server</text><rect x="110" y="{y}" width="10" height="10" fill="{BASELINE_COLOUR}"/><text x="124" y="{ty}">BM25 baseline (bars: mean; lines: 95% interval)</text></svg>"##,
        y = bottom + 26.0,
        ty = bottom + 35.0
    );
    svg
}

/// Every surface's chart, stacked, as one standalone SVG file.
pub fn svg(r: &QualityReport) -> String {
    let charts: Vec<String> = r.surfaces.iter().map(surface_svg).collect();
    let h = 250 * charts.len().max(1);
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 720 {h}" width="720" height="{h}">"#
    );
    for (i, c) in charts.iter().enumerate() {
        let _ = write!(out, r#"<g transform="translate(0 {})">{c}</g>"#, i * 250);
    }
    out.push_str("</svg>\n");
    out
}

/// A self-contained HTML page: tables and inline SVG charts, no script.
pub fn html(r: &QualityReport) -> String {
    let mut out = String::from(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>mcp-conform quality</title>\
         <style>body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d1f23;background:#f6f7f9}\
         table{border-collapse:collapse;background:#fff;margin:8px 0}td,th{border:1px solid #d8dce3;padding:4px 10px}\
         section{background:#fff;border:1px solid #d8dce3;border-radius:6px;padding:8px 16px;margin:12px 0}</style></head><body>",
    );
    let _ = write!(
        out,
        "<h1>Search quality</h1><p class=\"meta\">{}</p>",
        escape(&heading(r))
    );
    if r.nothing_to_measure() {
        out.push_str(
            "<p class=\"nothing\">Nothing to measure: the server offers no search surface.</p>",
        );
    }
    for s in &r.surfaces {
        let _ = write!(
            out,
            "<section class=\"surface\"><h2>{}</h2>",
            escape(&surface_title(s))
        );
        out.push_str("<table><tr><th>metric</th><th>server</th><th>BM25 baseline</th></tr>");
        for (name, a, b) in rows(s) {
            let _ = write!(
                out,
                "<tr><td>{name}</td><td>{}</td><td>{}</td></tr>",
                fig(&a),
                fig(&b)
            );
        }
        let _ = write!(
            out,
            "<tr><td>latency p50 / p95</td><td>{} / {}</td><td></td></tr></table>",
            ms(s.latency_p50_ms),
            ms(s.latency_p95_ms)
        );
        out.push_str(&surface_svg(s));
        out.push_str("</section>");
    }
    if !r.absent.is_empty() {
        out.push_str("<h2>Not offered</h2><ul>");
        for a in &r.absent {
            let _ = write!(out, "<li>{}: {}</li>", a.surface.label(), escape(&a.reason));
        }
        out.push_str("</ul>");
    }
    out.push_str("</body></html>\n");
    out
}

/// The quality column of `mcp-conform matrix` (quality.md): per server, the
/// MRR and recall@5 of each surface beside the baseline's.
pub fn matrix_markdown(rows: &[(String, Option<QualityReport>)]) -> String {
    use crate::quality::Surface;
    let mut out = String::from(
        "# Search quality per server\n\nMRR / recall@5 of each surface, BM25 baseline in brackets \
         (self-retrieval queries; `mcp-conform quality` gives the whole table).\n\n| server |",
    );
    for s in Surface::ALL {
        let _ = write!(out, " {} |", s.label());
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(Surface::ALL.len()));
    out.push('\n');
    for (name, report) in rows {
        let _ = write!(out, "| {} |", name.replace('|', "\\|"));
        for s in Surface::ALL {
            let measured = report
                .as_ref()
                .and_then(|r| r.surfaces.iter().find(|x| x.surface == s));
            let cell = match (report, measured) {
                (None, _) => "not measured".to_string(),
                (Some(_), None) => "not offered".to_string(),
                (Some(_), Some(x)) => match (&x.server, &x.baseline) {
                    (Some(a), Some(b)) => format!(
                        "{:.2} / {:.2} ({:.2} / {:.2})",
                        a.mrr.mean, a.recall_at_5.mean, b.mrr.mean, b.recall_at_5.mean
                    ),
                    _ => "no queries".to_string(),
                },
            };
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quality::bm25::Baseline;
    use crate::quality::measure::{surface_report, Answer, FORMAT};
    use crate::quality::{Feature, Item, Query, QueryKind, Relevant, Surface};

    fn report() -> QualityReport {
        let items = vec![Item {
            name: "a_b".into(),
            description: "x <y>".into(),
        }];
        let q = Query {
            text: "a b".into(),
            kind: QueryKind::Name,
            feature: Feature::Tools,
            relevant: vec![Relevant {
                name: "a_b".into(),
                grade: 1.0,
            }],
        };
        let s = surface_report(
            Surface::ToolsSearch,
            &["a_b".to_string()],
            &Baseline::new(&items),
            vec![(
                q,
                Answer::Ranked {
                    names: vec!["a_b".into()],
                    latency_ms: 1.0,
                },
            )],
            0,
        );
        QualityReport {
            format: FORMAT,
            target: "srv <x>".into(),
            transport: "stdio".into(),
            protocol_version: "2025-11-25".into(),
            seed: 0,
            query_set: "self-retrieval".into(),
            depth: 20,
            surfaces: vec![s],
            absent: vec![],
        }
    }

    #[test]
    fn html_is_escaped_and_has_no_script() {
        let page = html(&report());
        assert!(!page.contains("<script"), "no script at all");
        assert!(page.contains("srv &lt;x&gt;") && page.contains("<svg"));
        assert!(page.contains("class=\"bar server\""));
    }

    #[test]
    fn tables_hold_server_and_baseline() {
        let text = console(&report());
        assert!(
            text.contains("MRR        1.00 [1.00, 1.00]    1.00 [1.00, 1.00]"),
            "{text}"
        );
        assert!(
            markdown(&report()).contains("| recall@5 | 1.00 [1.00, 1.00] | 1.00 [1.00, 1.00] |")
        );
        let v: serde_json::Value = serde_json::from_str(&json(&report())).expect("json");
        assert_eq!(v["surfaces"][0]["queries"][0]["ranks"][0], 1);
        assert_eq!(v["surfaces"][0]["surface"], "tools/search");
    }
}
