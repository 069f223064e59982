"""Checks `skilldeck audit --format sarif` with SARIF consumers nobody here
wrote (run by scripts/test-sarif.sh in a throwaway venv):

  - pydantic-sarif: models generated from the OASIS sarif-schema-2.1.0.json
    (types, enums, required properties; unknown properties forbidden);
  - sarif-tools (`sarif summary`, `sarif csv`): the CLI reads the file and
    counts the results by level, which must match ours;
  - sarif-om: the reference object model's names for every property used.

Usage: sarif_check.py SARIF_FILE EXPECTED_RESULTS SARIF_CLI WORKDIR
"""
import json
import subprocess
import sys

path, expected, sarif_cli, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
failed = 0


def check(name, ok, detail=""):
    global failed
    print(f"{'PASS' if ok else 'FAIL'}: {name}{': ' + detail if detail and not ok else ''}")
    if not ok:
        failed += 1


text = open(path, encoding="utf-8").read()
doc = json.loads(text)

from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as Log

try:
    log = Log.model_validate_json(text)
    check("valid against the SARIF 2.1.0 schema's models (pydantic-sarif)", True)
except Exception as e:  # the validation error lists every problem
    check("valid against the SARIF 2.1.0 schema's models (pydantic-sarif)", False, str(e)[:2000])
    log = None

results = doc["runs"][0]["results"]
check(f"{expected} results written", len(results) == expected, f"{len(results)}")
rules = doc["runs"][0]["tool"]["driver"]["rules"]
ids = [r["id"] for r in rules]
check("every result's ruleIndex points at its rule",
      all(ids[r["ruleIndex"]] == r["ruleId"] for r in results))
check("levels are SARIF levels", all(r["level"] in ("error", "warning", "note") for r in results))
suppressed = [r for r in results if r.get("suppressions")]
check("an allowed finding is a suppressed result with its justification",
      any(s["suppressions"][0].get("justification") for s in suppressed))

# sarif-tools: the counts by level it reads back.
out = subprocess.run([sarif_cli, "summary", path], capture_output=True, text=True)
check("sarif-tools reads the file (sarif summary)", out.returncode == 0, out.stderr[-500:])
summary = out.stdout
# sarif-tools counts suppressed results too.
by_level = {lvl: sum(1 for r in results if r["level"] == lvl) for lvl in ("error", "warning", "note")}
for lvl, n in by_level.items():
    check(f"sarif-tools counts {n} {lvl}(s)", f"{lvl}: {n}" in summary, summary[-800:])
csv_out = f"{work}/out.csv"
out = subprocess.run([sarif_cli, "csv", "--output", csv_out, path], capture_output=True, text=True)
check("sarif-tools writes the results as CSV", out.returncode == 0, out.stderr[-500:])

# sarif-om: every property we write is a property of its object model.
import sarif_om
import attr

om_names = set()
for cls in vars(sarif_om).values():
    if isinstance(cls, type) and attr.has(cls):
        for a in attr.fields(cls):
            om_names.add(a.metadata.get("schema_property_name", a.name))


def keys(v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            if k != "properties" and not k.startswith("$"):
                out.add(k)
            if k != "properties":
                keys(x, out)
    elif isinstance(v, list):
        for x in v:
            keys(x, out)
    return out


unknown = sorted(keys(doc, set()) - om_names)
check("every property is one of sarif-om's", not unknown, ", ".join(unknown))

sys.exit(1 if failed else 0)
