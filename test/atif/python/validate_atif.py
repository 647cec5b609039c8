"""Validates ATIF files with harbor's own models and validator (harbor.models.trajectories, RFC 0001).

    python validate_atif.py FILE...

Prints one JSON object: per file, whether harbor's TrajectoryValidator accepts it, its errors,
and what harbor's Trajectory model reads back (schema version, steps, tool calls, reward).
"""

import json
import sys

from harbor.models.trajectories import Trajectory
from harbor.utils.trajectory_validator import TrajectoryValidator

out = {}
for path in sys.argv[1:]:
    validator = TrajectoryValidator()
    valid = validator.validate(path)
    entry = {"valid": valid, "errors": validator.errors}
    if valid:
        with open(path) as f:
            t = Trajectory.model_validate(json.load(f))
        entry.update(
            schema_version=t.schema_version,
            steps=len(t.steps),
            sources=[s.source for s in t.steps],
            tool_calls=sum(len(s.tool_calls or []) for s in t.steps),
            results=sum(len(s.observation.results) for s in t.steps if s.observation),
            reward=(t.final_metrics.extra or {}).get("reward") if t.final_metrics else None,
            # harbor's own JSON of it: what Harbor, NeMo Gym and SkyRL would read
            round_trip=t.to_json_dict() == Trajectory.model_validate(t.to_json_dict()).to_json_dict(),
        )
    out[path] = entry
print(json.dumps(out))
