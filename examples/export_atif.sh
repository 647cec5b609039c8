#!/usr/bin/env bash
# A run exported to ATIF, Harbor's Agent Trajectory Interchange Format (README, "Exporting trajectories").
#
#   examples/export_atif.sh [RUN_DIR]       # default: a new directory under the system's temp dir
#
# Runs the replay agent with the reference solutions of two example tasks (no model needed),
# exports every attempt to RUN_DIR/atif/<task>__<sample>__<attempt>.json, and, when the harbor
# package is importable (pip install pydantic && pip install --no-deps harbor), checks the files
# with harbor's own validator (PYTHON: an interpreter that has it; default python3).
# With a real agent: benchgym run --agent swe-agent --model ... first.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-$(mktemp -d)/atif-demo}
node bin/benchgym.js run --suite examples --agent replay --gold --model none --tasks roman-numerals,parse-duration --out "$run"
node bin/benchgym.js export-trajectories "$run" --format atif
"${PYTHON:-python3}" - "$run"/atif/*.json <<'PY'
import json, sys
try:
    from harbor.utils.trajectory_validator import TrajectoryValidator
except ImportError:
    TrajectoryValidator = None
for path in sys.argv[1:]:
    with open(path) as f:
        t = json.load(f)
    calls = [c["function_name"] for s in t["steps"] for c in s.get("tool_calls", [])]
    line = f"{path}: {t['schema_version']}, {len(t['steps'])} steps, calls {calls}, reward {t['final_metrics']['extra']['reward']}"
    if TrajectoryValidator:
        v = TrajectoryValidator()
        line += "; harbor: " + ("valid" if v.validate(path) else f"INVALID {v.errors}")
    print(line)
PY
