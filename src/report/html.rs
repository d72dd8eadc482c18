//! A self-contained HTML report (`--report-html`): no network, no external
//! assets. It opens with what to fix, one card per distinct problem
//! (html_problems.rs). The run's data is embedded as JSON and rendered by a
//! small script: what applied to the server, counts per era and per profile
//! (separate tables), the profiles it does not offer, one row per result,
//! failures first (identical
//! results in several eras merged, the eras named), skipped scenarios folded
//! into a count per reason, filters by outcome and profile, each row expandable to its
//! requirement, what the server sent, coloured diff (its first lines, the
//! whole of it one click further) and wire transcript.

use super::data::ReportData;
use super::evidence::html_escape as escape;
use super::overview::{self, Overview};
use crate::run::events::Counts;
use crate::run::outcome::Outcome;

const STYLE: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d1f23;background:#f6f7f9}
header{background:#1d2433;color:#fff;padding:16px 24px}
header h1{margin:0 0 4px;font-size:20px}
header .meta{opacity:.8;font-size:13px}
main{padding:16px 24px;max-width:1200px}
.counts{display:flex;gap:8px;flex-wrap:wrap;margin:8px 0 16px}
.count{border-radius:6px;padding:6px 12px;background:#fff;border:1px solid #d8dce3;font-weight:600}
table.profiles{border-collapse:collapse;background:#fff;margin-bottom:16px}
table.profiles td,table.profiles th{border:1px solid #d8dce3;padding:4px 10px;text-align:right}
table.profiles td:first-child,table.profiles th:first-child{text-align:left}
.filters{display:flex;gap:16px;flex-wrap:wrap;margin-bottom:12px;background:#fff;padding:8px 12px;border:1px solid #d8dce3;border-radius:6px}
.filters label{cursor:pointer;user-select:none}
.scenario{background:#fff;border:1px solid #d8dce3;border-left-width:6px;border-radius:4px;margin:6px 0}
.scenario>.head{padding:6px 10px;cursor:pointer;display:flex;gap:10px;align-items:baseline}
.scenario>.head .id{font-family:ui-monospace,Menlo,monospace;font-weight:600}
.scenario>.head .msg{color:#5a6270;font-size:13px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;flex:1}
.scenario>.body{display:none;padding:8px 14px 12px;border-top:1px solid #eceef2}
.scenario.open>.body{display:block}
.badge{font-size:12px;font-weight:700;text-transform:uppercase;border-radius:4px;padding:1px 6px;color:#fff}
.o-pass{border-left-color:#2e9e4f}.o-pass .badge{background:#2e9e4f}
.o-fail{border-left-color:#d1343b}.o-fail .badge{background:#d1343b}
.o-error{border-left-color:#8b1a1f}.o-error .badge{background:#8b1a1f}
.o-warn{border-left-color:#d98b0b}.o-warn .badge{background:#d98b0b}
.o-info{border-left-color:#2b7bb9}.o-info .badge{background:#2b7bb9}
.o-skip{border-left-color:#9aa1ad}.o-skip .badge{background:#9aa1ad}
blockquote{margin:6px 0;padding:4px 10px;border-left:3px solid #c3c8d1;color:#3b414b;background:#f3f4f6}
pre{background:#f3f4f6;padding:8px;overflow:auto;font-size:12px;border-radius:4px}
pre.diff .add{color:#1a7f37;background:#e6ffec;display:block}
pre.diff .del{color:#b42318;background:#ffebe9;display:block}
pre.diff .hunk{color:#6e40c9;display:block}
.finding{margin:6px 0}
.finding .server-sent code,.finding .request code{font-family:ui-monospace,Menlo,monospace;font-size:12px;word-break:break-all}
.finding .request{color:#5a6270;font-size:12px}
details.whole-diff>summary{cursor:pointer;color:#0b5cad;font-size:13px}
.transcript .sent{color:#0b5cad}.transcript .received{color:#1a7f37}.transcript .note{color:#7a808b}
h3{margin:12px 0 4px;font-size:14px}
h2{margin:16px 0 6px;font-size:16px}
.scenario>.head .eras{color:#5a6270;font-size:12px;white-space:nowrap}
.headline{font-size:15px;font-weight:600;margin:8px 0}
ul.not-offered{margin:4px 0 12px;padding-left:20px}
details.skip-group{background:#fff;border:1px solid #d8dce3;border-radius:4px;margin:4px 0;padding:4px 10px}
details.skip-group>summary{cursor:pointer}
.skip-ids{font-family:ui-monospace,Menlo,monospace;font-size:12px;color:#5a6270;margin-top:4px}
.problem{background:#fff;border:1px solid #d8dce3;border-left-width:6px;border-radius:4px;margin:8px 0;padding:8px 12px}
.problem .p-head{display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}
.problem .id{font-family:ui-monospace,Menlo,monospace;font-weight:600}
.problem .reqs,.problem .eras{color:#5a6270;font-size:12px}
.problem .p-msg{margin:4px 0;font-weight:600}
.level{font-size:12px;font-weight:700;border:1px solid #c3c8d1;border-radius:4px;padding:0 5px}
.shared{font-size:13px;color:#2b5d8a;background:#eef5fb;border-radius:4px;padding:2px 8px;margin:4px 0}
.cite{font-size:12px;color:#5a6270;margin-top:2px}
.evidence{font-size:13px}.evidence code{font-family:ui-monospace,Menlo,monospace;font-size:12px;word-break:break-all}
"#;

const SCRIPT: &str = r#"
(function(){
const data = JSON.parse(document.getElementById('report-data').textContent);
const el = (tag, attrs, ...kids) => { const e = document.createElement(tag); for (const [k,v] of Object.entries(attrs||{})) { if (k === 'class') e.className = v; else e.setAttribute(k, v); } for (const k of kids) e.append(k); return e; };
const outcomes = ['fail','error','warn','info','pass'];
const profiles = [...new Set(data.rows.map(s => s.profile))].sort();
const shown = {outcome: new Set(outcomes), profile: new Set(profiles)};
const DIFF_LINES = 40, SENT_CHARS = 2000, HARNESS_KEYS = ['request','pages','page_count'];
function diffBlock(lines){ const pre = el('pre',{class:'diff'}); for (const line of lines) { const cls = line.startsWith('@@') ? 'hunk' : (line.startsWith('+') && !line.startsWith('+++')) ? 'add' : (line.startsWith('-') && !line.startsWith('---')) ? 'del' : ''; pre.append(el('span',{class:cls}, line + '\n')); } return pre; }
function cut(text, max){ return text.length > max ? text.slice(0, max) + ' … ' + (text.length - max) + ' more characters' : text; }
function sent(actual){
  if (actual && typeof actual.status === 'number' && typeof actual.text === 'string') return el('div',{class:'server-sent'}, el('strong',{}, 'Server answered HTTP ' + actual.status + (actual.content_type ? ' (' + actual.content_type + ')' : '') + ': '), el('code',{}, cut(actual.text, SENT_CHARS)));
  let shown = actual, label = 'Server sent';
  if (actual && typeof actual === 'object' && !Array.isArray(actual)) { shown = Object.fromEntries(Object.entries(actual).filter(([k]) => !HARNESS_KEYS.includes(k))); if (actual.page_count > 1) label += ' (' + actual.page_count + ' pages, joined)'; }
  return el('div',{class:'server-sent'}, el('strong',{}, label + ': '), el('code',{}, cut(JSON.stringify(shown), SENT_CHARS)));
}
function diffs(text){
  const lines = text.replace(/\n$/, '').split('\n');
  if (lines.length <= DIFF_LINES) return [diffBlock(lines)];
  return [diffBlock(lines.slice(0, DIFF_LINES)), el('details',{class:'whole-diff'}, el('summary',{}, (lines.length - DIFF_LINES) + ' more diff lines'), diffBlock(lines.slice(DIFF_LINES)))];
}
function body(s){
  const b = el('div',{class:'body'});
  b.append(el('div',{}, s.title));
  if (s.shown.requirements.length) b.append(el('div',{class:'req'}, 'Requirement: ' + s.shown.requirements.join(', ') + ' · level ' + s.shown.level + ((s.bases && s.bases.length) ? ' (basis: ' + s.bases.join(', ') + ')' : '')));
  if (s.shared_note) b.append(el('div',{class:'shared'}, s.shared_note));
  for (const sp of s.spec) { const src = el('div',{}, (sp.title || sp.doc) + (sp.provenance ? ' [' + ({'mcp-spec':'spec','project':'project rule'}[sp.provenance] || sp.provenance) + ']' : '') + (sp.section ? ', ' + sp.section : '')); if (sp.url) src.append(' ', /^https?:\/\//.test(sp.url) ? el('a',{href: sp.url}, sp.url) : el('code',{}, sp.url)); b.append(src); if (sp.quote) b.append(el('blockquote',{}, sp.quote)); }
  if (s.message && !s.findings.length) b.append(el('p',{}, el('strong',{}, s.message)));
  if (s.alternatives.length) b.append(el('div',{}, 'Server chose: ' + s.alternatives.join(', ')));
  for (const f of s.findings) { const d = el('div',{class:'finding'}, el('div',{}, (f.location ? f.location + ': ' : '') + f.outcome + ': ' + (f.step ? f.step + ': ' : '') + f.message)); if (f.path) d.append(el('div',{}, 'first mismatch at: ' + f.path)); if (f.other_paths && f.other_paths.length) d.append(el('div',{}, 'also at: ' + f.other_paths.join(', '))); if (f.actual !== undefined) d.append(sent(f.actual)); if (f.request !== undefined) d.append(el('div',{class:'request'}, 'mcp-conform sent: ', el('code',{}, JSON.stringify(f.request)))); if (f.diff) d.append(...diffs(f.diff)); else if (typeof f.expected === 'string') d.append(el('pre',{}, f.expected)); b.append(d); }
  if (s.stderr_tail && s.stderr_tail.trim()) { b.append(el('h3',{}, s.profile === 'client' ? 'Client output (may be unrelated)' : 'Server stderr (may be unrelated)')); b.append(el('pre',{}, s.stderr_tail)); }
  if (s.transcript.length) { b.append(el('h3',{}, 'Wire transcript')); const pre = el('pre',{class:'transcript'}); for (const t of s.transcript) { const arrow = t.direction === 'sent' ? '→' : t.direction === 'received' ? '←' : '·'; pre.append(el('span',{class:t.direction}, `${String(t.at_ms).padStart(6)}ms ${t.session} ${arrow} ${typeof t.message === 'string' ? t.message : JSON.stringify(t.message)}\n`)); } b.append(pre); }
  return b;
}
function render(){
  const list = document.getElementById('scenarios'); list.textContent = '';
  let n = 0;
  for (const s of data.rows) {
    if (!shown.outcome.has(s.outcome) || !shown.profile.has(s.profile)) continue;
    n++;
    const card = el('div',{class:'scenario o-' + s.outcome, 'data-id': s.id, 'data-outcome': s.outcome});
    const eras = el('span',{class:'eras'}, s.eras.length ? 'protocol ' + s.eras.join(', ') : '');
    const head = el('div',{class:'head'}, el('span',{class:'badge'}, s.outcome), el('span',{class:'level'}, s.shown.level), el('span',{class:'id'}, s.id), eras, el('span',{class:'msg'}, s.message || s.title));
    head.addEventListener('click', () => card.classList.toggle('open'));
    card.append(head, body(s)); list.append(card);
  }
  document.getElementById('shown').textContent = n + ' of ' + data.rows.length + ' results shown (identical results in several eras are one row)';
}
function filters(){
  const box = document.getElementById('filters');
  const group = (name, values, set) => { const g = el('div',{}, el('strong',{}, name + ': ')); for (const v of values) { const cb = el('input',{type:'checkbox','data-filter':name,value:v}); cb.checked = true; cb.addEventListener('change', () => { cb.checked ? set.add(v) : set.delete(v); render(); }); g.append(el('label',{}, cb, ' ' + v + ' ')); } box.append(g); };
  group('outcome', outcomes, shown.outcome); group('profile', profiles, shown.profile);
}
function skips(){
  const box = document.getElementById('skips');
  for (const g of data.skips) {
    const d = el('details',{class:'skip-group'}, el('summary',{}, g.runs + ' skipped: ' + g.reason + ' (' + g.ids.length + ' scenario' + (g.ids.length === 1 ? '' : 's') + ')'));
    d.append(el('div',{class:'skip-ids'}, g.ids.join(', ')));
    box.append(d);
  }
}
filters(); render(); skips();
})();
"#;

/// What the page's script renders: results that applied, failures first
/// (then warnings, info, passes), identical ones in several eras merged into
/// one row naming them; skipped ones folded into a count per reason.
fn page_data(data: &ReportData, view: &Overview) -> serde_json::Value {
    let applied = data.scenarios.iter().filter(|r| r.outcome != Outcome::Skip);
    let rows: Vec<serde_json::Value> = overview::rows(applied)
        .into_iter()
        .map(|row| {
            let mut v = serde_json::to_value(row.result).unwrap_or_default();
            let shown = row.result.shown();
            v["eras"] = serde_json::json!(row.eras);
            v["shown"] =
                serde_json::json!({"level": shown.level, "requirements": shown.requirements});
            if let Some(note) = row.result.shared_note() {
                v["shared_note"] = serde_json::json!(note);
            }
            v
        })
        .collect();
    let skips: Vec<serde_json::Value> = view
        .skips
        .iter()
        .map(|g| serde_json::json!({"reason": g.reason, "runs": g.runs, "ids": g.ids}))
        .collect();
    serde_json::json!({"rows": rows, "skips": skips})
}

/// Rows of a counts table that add up: runs, then each outcome.
fn count_rows<'a>(rows: impl IntoIterator<Item = (String, &'a Counts)>) -> String {
    rows.into_iter()
        .map(|(label, c)| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&label), c.total(), c.passed, c.failed, c.warned, c.info, c.errors, c.skipped
            )
        })
        .collect()
}

fn counts_table(class: &str, first: &str, rows: String) -> String {
    format!(
        "<table class=\"profiles {class}\"><tr><th>{first}</th><th>runs</th><th>passed</th><th>failed</th><th>warned</th><th>info</th><th>errors</th><th>skipped</th></tr>{rows}</table>"
    )
}

/// The tables: per era (when several), per profile that applied, and the
/// profiles not offered with their reason.
fn tables(data: &ReportData, view: &Overview) -> String {
    let mut html = String::new();
    if view.eras.len() > 1 {
        let rows = count_rows(
            view.eras
                .iter()
                .map(|(e, c)| (e.clone(), c))
                .chain([("all eras".to_string(), &data.summary.overall)]),
        );
        html.push_str(&format!(
            "<h2>Per protocol version</h2>{}",
            counts_table("eras", "protocol", rows)
        ));
    }
    let across = if view.eras.len() > 1 {
        " (all eras)"
    } else {
        ""
    };
    let rows = count_rows(view.profiles.iter().map(|(p, c)| (p.clone(), c)));
    html.push_str(&format!(
        "<h2>Per profile{across}</h2>{}",
        counts_table("by-profile", "profile", rows)
    ));
    if !view.not_offered.is_empty() {
        html.push_str("<h2>Not offered by this server</h2><ul class=\"not-offered\">");
        for n in &view.not_offered {
            html.push_str(&format!(
                "<li><strong>{}</strong>: {}</li>",
                escape(&n.profile),
                escape(&n.reason)
            ));
        }
        html.push_str("</ul>");
    }
    html
}

/// The report as one HTML file.
pub fn render(data: &ReportData) -> String {
    let view = data.overview();
    let json = serde_json::to_string(&page_data(data, &view)).unwrap_or_else(|_| "{}".into());
    // Keep the embedded JSON from closing its <script> element early.
    let json = json.replace("</", "<\\/");
    let s = &data.summary.overall;
    let server = &data.run.server;
    let name = server
        .pointer("/serverInfo/name")
        .and_then(|v| v.as_str())
        .unwrap_or("unnamed server");
    let version = server
        .pointer("/serverInfo/version")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let (_, verdict) = data.verdict();
    let tables = tables(data, &view);
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcp-conform: {name} {version}</title><style>{STYLE}</style></head>
<body><header><h1>mcp-conform: {name} {version} — {verdict}</h1>
<div class="meta">{target} · {transport} · protocol {era} · mcp-conform {harness} · started {started} · {secs:.2}s</div></header>
<main>
<div class="headline" id="headline">{headline}</div>
{problems}
<div class="counts" id="counts"><span class="count" id="count-passed">{passed} passed</span><span class="count" id="count-failed">{failed} failed</span><span class="count" id="count-warned">{warned} warned</span><span class="count" id="count-info">{info} info</span><span class="count" id="count-errors">{errors} errors</span><span class="count" id="count-skipped">{skipped} skipped as not applicable</span></div>
{tables}
<h2>Results</h2>
<div class="filters" id="filters"></div><div id="shown"></div>
<div id="scenarios"></div>
<h2>Skipped as not applicable</h2>
<div id="skips"></div>
</main>
<script type="application/json" id="report-data">{json}</script>
<script>{SCRIPT}</script>
</body></html>
"#,
        name = escape(name),
        version = escape(version),
        target = escape(&data.run.target),
        transport = escape(&data.run.transport),
        era = escape(&data.eras_text()),
        harness = escape(&data.run.harness_version),
        started = escape(&data.run.started_at),
        secs = data.summary.duration_ms as f64 / 1000.0,
        headline = escape(&view.headline()),
        problems = super::html_problems::section(&data.scenarios),
        passed = s.passed,
        failed = s.failed,
        warned = s.warned,
        info = s.info,
        skipped = s.skipped,
        errors = s.errors,
    )
}
