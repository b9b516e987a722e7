"""Global registry sync (docs/formats/history_registry_rollout.md §7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.history.global_registry import (
    backup_file_name,
    denied_payload,
    skipped_disabled_payload,
    sync_global,
    writability_denied,
    writability_ok,
)

# the spec's minimal registry (docs/formats/history_registry_rollout.md §2)
MINIMAL_REGISTRY = Path("spec-examples/minimal-registry.json")
NOW = "2026-11-30T17:47:34Z"
LATER = "2026-11-30T18:00:00Z"
SRC = "/proj/.benchledger/registry.json"
OTHER_SRC = "/elsewhere/.benchledger/registry.json"
RT = "/rt"


def _sync(global_doc, registry, **kwargs):
    options = {
        "goal_id": None,
        "replace_state": False,
        "now": NOW,
        "source_registry": SRC,
        "runtime_root": RT,
        "dry_run": True,
    }
    options.update(kwargs)
    return sync_global(global_doc, registry, **options)


def _minimal_registry(fixtures_dir: Path) -> dict:
    return json.loads((fixtures_dir / MINIMAL_REGISTRY).read_text(encoding="utf-8"))


def test_fresh_global_registry_from_spec_minimal(fixtures_dir: Path) -> None:
    result = _sync(None, _minimal_registry(fixtures_dir), dry_run=False)
    payload, document = result.payload, result.document
    assert payload["ok"] is True and payload["skipped"] is False and payload["wrote"] is True
    assert payload["actions"] == ["demo:added"] and payload["synced_goal_ids"] == ["demo"]
    assert payload["source_goal_count"] == 1 and payload["global_goal_count"] == 1
    assert payload["global_registry"] == "/rt/registry.global.json"
    assert payload["backup_path"] is None and payload["route_collisions"] == []
    assert payload["route_replacement_allowed"] is False
    assert result.changed is True
    assert document["schema_version"] == "0.1"
    assert document["registry_role"] == "global-local"
    assert document["common_runtime_root"] == RT and document["updated_at"] == NOW
    assert "projects" not in document
    goal = document["goals"][0]
    assert goal["id"] == "demo" and goal["source_registry"] == SRC and goal["synced_at"] == NOW
    assert goal["authority_source_count"] == 0
    assert goal["authority_registry"]["declared"] is False


def test_sanitising_drops_authority_material() -> None:
    registry = {
        "goals": [
            {
                "id": "g",
                "repo": "/proj",
                "authority_sources": ["a", "b", "c"],
                "authority_registry": {
                    "path": "AUTH.md",
                    "required": True,
                    "conflict_risk": "low",
                    "default_entries": [{"path": "x"}, {"path": "y"}],
                },
            }
        ]
    }
    checked: list[str] = []
    result = _sync(None, registry, path_exists=lambda p: checked.append(p) or True)
    goal = result.document["goals"][0]
    assert "authority_sources" not in goal and goal["authority_source_count"] == 3
    summary = goal["authority_registry"]
    assert "default_entries" not in summary
    assert summary["default_entry_count"] == 2
    assert summary["declared"] is True and summary["required"] is True
    assert summary["path"] == "AUTH.md" and summary["path_exists"] is True
    assert summary["conflict_risk"] == "low"
    assert checked == ["/proj/AUTH.md"]
    assert registry["goals"][0]["authority_sources"] == ["a", "b", "c"]  # source untouched


def test_skipped_when_source_is_the_global_registry() -> None:
    result = _sync(None, {"goals": [{"id": "g"}]}, source_registry="/rt/./registry.global.json")
    assert result.document is None
    assert result.payload == {
        "ok": True,
        "dry_run": True,
        "skipped": True,
        "reason": "source registry is already the global registry",
        "registry": "/rt/./registry.global.json",
        "global_registry": "/rt/registry.global.json",
        "runtime_root": RT,
        "synced_goal_ids": [],
        "actions": [],
    }
    assert skipped_disabled_payload(False) == {
        "ok": True,
        "dry_run": False,
        "skipped": True,
        "reason": "disabled by --no-global-sync",
    }


def test_goal_selection_uses_stripped_id() -> None:
    registry = {"goals": [{"id": "a"}, {"id": "b"}, "junk", {"no": "id"}]}
    assert _sync(None, registry, goal_id=" b ").payload["synced_goal_ids"] == ["b"]
    assert _sync(None, registry).payload["source_goal_count"] == 2
    with pytest.raises(InputError, match=r"^goal id not found in source registry: zz$"):
        _sync(None, registry, goal_id="zz")


def test_merge_keeps_order_and_moves_resynced_goal_last() -> None:
    first = _sync(None, {"goals": [{"id": "a"}, {"id": "b"}]}).document
    first["goals"].insert(0, {"id": "foreign", "source_registry": OTHER_SRC})
    first["custom_key"] = "kept"
    second = _sync(first, {"schema_version": "9", "goals": [{"id": "a", "note": "v2"}]}, now=LATER)
    assert [goal["id"] for goal in second.document["goals"]] == ["foreign", "b", "a"]
    assert second.payload["actions"] == ["a:updated"]
    assert second.document["goals"][-1]["note"] == "v2"
    assert second.document["custom_key"] == "kept"
    assert second.document["schema_version"] == "0.1"  # the existing one wins


def test_unchanged_sync_is_not_a_change() -> None:
    registry = {"goals": [{"id": "a"}]}
    document = _sync(None, registry).document
    again = _sync(document, registry)
    assert again.changed is False and again.payload["actions"] == ["a:updated"]


# --- route collisions --------------------------------------------------------------------------


def _existing_with_route() -> dict:
    registry = {"goals": [{"id": "g", "repo": "/old/repo", "state_file": "STATE.md"}]}
    return _sync(None, registry, source_registry=OTHER_SRC).document


@pytest.mark.parametrize(
    ("incoming", "fields"),
    [
        ({"id": "g"}, "source_registry"),
        ({"id": "g", "repo": "/new/repo"}, "source_registry, repo"),
        (
            {"id": "g", "repo": "/new/repo", "state_file": "OTHER.md"},
            "source_registry, repo, state_file",
        ),
    ],
)
def test_route_collision_refused_without_replace_state(incoming: dict, fields: str) -> None:
    with pytest.raises(InputError) as info:
        _sync(_existing_with_route(), {"goals": [incoming]})
    assert str(info.value) == (
        f"global route collision for goal_id g: {fields} would change. Use the existing "
        "source_registry to register agents, record under another --goal-id, or replace the "
        "route with `benchledger sync-global --goal-id g --replace-state --execute` (it writes "
        "a global registry backup first). A project of its own needs no shared runtime root: "
        "without --runtime-root or common_runtime_root it uses its own .benchledger/."
    )
    assert "--fork-goal" not in str(info.value)  # benchledger has no such flag


def test_same_route_or_unset_fields_do_not_collide() -> None:
    existing = _existing_with_route()
    result = _sync(
        existing, {"goals": [{"id": "g"}]}, source_registry=OTHER_SRC + "/../registry.json/"
    )
    assert result.payload["actions"] == ["g:updated"]


def test_route_collision_replaced_with_backup() -> None:
    existing = _existing_with_route()
    result = _sync(existing, {"goals": [{"id": "g", "repo": "/new/repo"}]}, replace_state=True)
    payload = result.payload
    assert payload["actions"] == ["g:replaced-route"]
    assert payload["route_replacement_allowed"] is True
    (collision,) = payload["route_collisions"]
    assert collision == {
        "goal_id": "g",
        "changed_fields": ["source_registry", "repo"],
        "existing_route": {
            "source_registry": OTHER_SRC,
            "repo": "/old/repo",
            "state_file": "STATE.md",
        },
        "incoming_route": {"source_registry": SRC, "repo": "/new/repo", "state_file": None},
    }
    assert result.backup_name == "registry.global.json.route-collision-backup-20261130T174734Z.bak"
    assert payload["backup_path"] == "/rt/" + result.backup_name
    assert result.backup_document == existing
    assert result.document["goals"][0]["repo"] == "/new/repo"


def test_no_backup_when_global_file_did_not_exist() -> None:
    assert backup_file_name(NOW).endswith("-20261130T174734Z.bak")
    result = _sync(None, {"goals": [{"id": "g"}]}, replace_state=True)
    assert result.backup_name is None and result.payload["backup_path"] is None


# --- attention carry-over ----------------------------------------------------------------------


def _existing_with_attention() -> dict:
    registry = {"goals": [{"id": "g", "waiting_on": "operator", "operator_question": "ok?"}]}
    return _sync(None, registry, source_registry=OTHER_SRC).document


def test_attention_carried_from_another_source() -> None:
    registry = {"goals": [{"id": "g", "waiting_on": ""}]}
    result = _sync(_existing_with_attention(), registry, replace_state=True)
    goal = result.document["goals"][0]
    assert goal["waiting_on"] == "operator" and goal["operator_question"] == "ok?"
    assert goal["attention_override_synced_from"] == OTHER_SRC


def test_attention_cleared_on_request_or_same_source() -> None:
    cleared = _sync(
        _existing_with_attention(),
        {"goals": [{"id": "g", "clear_attention_override": True}]},
        replace_state=True,
    ).document["goals"][0]
    assert "waiting_on" not in cleared and "clear_attention_override" not in cleared
    same = _sync(_existing_with_attention(), {"goals": [{"id": "g"}]}, source_registry=OTHER_SRC)
    assert "waiting_on" not in same.document["goals"][0]


# --- projects ----------------------------------------------------------------------------------


def test_projects_referenced_are_copied_and_validated() -> None:
    project = {"project_id": "p1", "repository_bindings": ["github.com/o/r"]}
    registry = {
        "projects": [project, {"project_id": "unused"}],
        "goals": [{"id": "g", "project_id": "p1"}],
    }
    document = _sync(None, registry).document
    assert document["projects"] == [project]
    with pytest.raises(
        InputError, match=r"^global ProjectRecord conflicts with source registry: p1$"
    ):
        changed = {**registry, "projects": [{"project_id": "p1", "repository_bindings": ["x"]}]}
        _sync(document, changed)


@pytest.mark.parametrize(
    ("registry", "message"),
    [
        (
            {"goals": [{"id": "g", "project_id": "p9"}]},
            "goal references a missing ProjectRecord: p9",
        ),
        ({"projects": "x", "goals": [{"id": "g"}]}, "source registry projects must be a list"),
        (
            {"projects": ["x"], "goals": [{"id": "g"}]},
            "source registry projects entries must be JSON objects",
        ),
        (
            {"projects": [{"name": "n"}], "goals": [{"id": "g"}]},
            "source registry ProjectRecord is missing project_id",
        ),
        (
            {"projects": [{"project_id": "p"}, {"project_id": "p"}], "goals": [{"id": "g"}]},
            "source registry has duplicate project_id: p",
        ),
        (
            {"projects": [{"project_id": "p", "repository_bindings": "x"}], "goals": [{"id": "g"}]},
            "source registry ProjectRecord p has a malformed repository_bindings list",
        ),
    ],
)
def test_project_errors(registry: dict, message: str) -> None:
    with pytest.raises(InputError) as info:
        _sync(None, registry)
    assert str(info.value) == message


# --- denied payload ----------------------------------------------------------------------------


def test_denied_payload_copies_probe_permission_flag() -> None:
    success = _sync(None, {"goals": [{"id": "g"}]}, dry_run=False).payload
    probe = writability_denied(
        "/rt/registry.global.json", errno=13, error="Permission denied", permission_denied=True
    )
    denied = denied_payload(success, probe)
    assert denied["ok"] is False and denied["wrote"] is False and denied["write_denied"] is True
    assert denied["synced_goal_ids"] == [] and denied["attempted_goal_ids"] == ["g"]
    assert denied["error_kind"] == "global_registry_write_denied" and denied["errno"] == 13
    assert denied["requires_host_permission"] is True
    assert denied["global_registry_writability"]["error_kind"] == "registry_write_denied"
    assert denied["project_registry_usable"] is True
    assert denied["requires_global_registry_repair"] is True
    other = writability_denied("/rt/x", errno=28, error="No space", permission_denied=False)
    assert other["error_kind"] == "registry_write_probe_failed"
    assert denied_payload(success, other)["requires_host_permission"] is False
    ok = writability_ok("/rt/registry.global.json")
    assert ok["schema_version"] == "loopx_registry_writability_v0" and ok["parent"] == "/rt"
