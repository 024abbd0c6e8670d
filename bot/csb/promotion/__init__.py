"""CSB's promotion of a staging run to `runs/official`, rule for rule as CSB's own scripts decide it
(`promote_run.py`, `generate_manifest.py`, `quarantine_invalid_tasks.py`, `official_integrity.py`): the
gates, the MANIFEST, quarantine, triage.json and the destination. Reading and deciding only, except the
MANIFEST and triage writers and the file steps, which write only the paths they are given."""
