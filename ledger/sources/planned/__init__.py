"""Planned (no-run) Terminal-Bench and SkillsBench records: options, timeouts, preflight, launch
preview."""
