#!/usr/bin/env python3
"""Rewrites the `scenarios:` list (and a missing section/quote) of every entry
in scenarios/requirements.yaml from the scenario files' `requirements:` and
`spec:` keys, and its `rules:` list from the trace rules (rules/trace/*.yaml)
that cite it. tests/it/requirements.rs fails when they disagree; run this
after adding or renaming scenarios or trace rules."""
import json
import pathlib
import re
import sys

try:
    import yaml  # PyYAML, only for reading scenario files
except ImportError:
    sys.exit("sync-requirements.py needs PyYAML: pip install pyyaml")

repo = pathlib.Path(__file__).resolve().parent.parent
root = repo / "scenarios"
registry_path = root / "requirements.yaml"
covering, spec_of = {}, {}
for path in sorted(root.rglob("*.yaml")):
    if path.name in ("requirements.yaml", "sources.yaml"):
        continue
    doc = yaml.safe_load(path.read_text())
    for rid in doc.get("requirements", []):
        covering.setdefault(rid, []).append(doc["id"])
        if doc.get("spec"):
            spec_of.setdefault(rid, doc["spec"][0])

# the trace rules of `watch` and `client` cover the requirements they cite
ruled = {}
for path in sorted((repo / "rules" / "trace").glob("*.yaml")):
    for rule in yaml.safe_load(path.read_text()).get("rules", []):
        ruled.setdefault(rule["requirement"], []).append(rule["id"])


def q(s):
    return json.dumps(s, ensure_ascii=False)


out, current = [], None
lines = registry_path.read_text().splitlines()
i = 0
while i < len(lines):
    line = lines[i]
    m = re.match(r"  - id: (\S+)", line)
    if m:
        current = m.group(1)
    if m:
        has_section = has_quote = False
    if current and line.startswith("    section:"):
        has_section = True
    if current and line.startswith("    quote:"):
        has_quote = True
    if current and line.startswith("    rules:"):
        i += 1
        continue
    if current and line.startswith("    scenarios:"):
        # a curated section or quote stays; only a missing one is filled in
        spec = spec_of.get(current, {})
        if spec.get("section") and not has_section:
            out.append(f"    section: {q(spec['section'])}")
        if spec.get("quote") and not has_quote:
            out.append(f"    quote: {q(spec['quote'])}")
        ids = sorted(set(covering.get(current, [])))
        out.append("    scenarios: [" + ", ".join(ids) + "]")
        if ruled.get(current):
            out.append("    rules: [" + ", ".join(sorted(ruled[current])) + "]")
        i += 1
        continue
    out.append(line)
    i += 1
registry_path.write_text("\n".join(out) + "\n")
missing = [r for r in re.findall(r"  - id: (\S+)", registry_path.read_text()) if r not in covering and r not in ruled]
print(f"{len(covering)} requirements covered by scenarios, {len(ruled)} by trace rules; uncovered: {', '.join(missing) or 'none'}")
