"""CSB's promotion of a staging run to `runs/official`, rule for rule (`../OPERATIONS` §1–§3 of CSB's
post-run loop): the gates, the MANIFEST, quarantine, triage.json and the destination. Pure reading and
deciding, except the MANIFEST writer and triage writer, which write only the file they are given."""
