"""Harbor 0.25 job directory, scoring: the job's and each attempt's status, the benchmark id of a
trial, its primary reward and, for an attempt without one, why (docs/formats/harbor.md §2,
§5.4-5.8).

A missing reward is never a zero, and a job state is reported as found, never upgraded to
``completed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchledger.ledger.sources.harbor.files import _Json
from benchledger.ledger.sources.harbor.trials import _Attempt
from benchledger.ledger.sources.harbor.values import _dict, _last_segment, _number, _text

# Harbor 0.25.0's own error policy (docs/formats/harbor.md §2): exception type -> cause.
_CAUSES: dict[str, list[str]] = {
    "sandbox_failed": (
        "EnvironmentStartTimeoutError SandboxBuildFailedError AgentSetupTimeoutError "
        "HealthcheckError SandboxLikelyOutOfMemoryError MemoryLimitExceededError SSHAccessError "
        "GKEExecStreamClosedError GKEPodNotFoundError RuntimeRequestError AddTestsDirError "
        "DownloadVerifierDirError"
    ).split(),
    "model_provider_failed": (
        "ApiError ApiRateLimitError ApiInternalServerError ApiOverloadedError "
        "ApiConnectionClosedError ApiResponseStalledError UnknownApiError "
        "NetworkConnectionError ApiConnectionError "
        "ApiUsageLimitError RateLimitError InternalServerError ServiceUnavailableError "
        "APIConnectionError APIError Timeout BadRequestError UnprocessableEntityError "
        "UnsupportedParamsError APIResponseValidationError BudgetExceededError "
        "AgentAuthenticationError ModelNotFoundError ApiProviderResourceNotFoundError "
        "AuthenticationError PermissionDeniedError NotFoundError"
    ).split(),
    "harbor_failed": (
        "ServiceOperationsUnsupportedError VercelScopeError DspyImportError MissingExtraError "
        "RegradeError"
    ).split(),
    "agent_exhausted_budget": (
        "AgentTimeoutError ContextWindowExceededError OutputTokenExceededError "
        "ContextLengthExceededError OutputLengthExceededError"
    ).split(),
    "agent_refused_task": ["AgentSafetyRefusalError", "ContentPolicyViolationError"],
    "verifier_failed": [
        "VerifierTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
    ],
    "cancelled": ["CancelledError"],
}
_CAUSE_OF = {exc: cause for cause, excs in _CAUSES.items() for exc in excs}

# docs/formats/harbor.md §5.8: attribution labels in priority order.
_LABEL_PRIORITY = (
    "run_cancelled",
    "agent_setup_timeout_before_worker_start",
    "environment_setup_failed_before_worker",
    "model_provider_failure_before_solution_attempt",
    "runner_internal_failure",
    "agent_process_nonzero_exit_before_solution_attempt",
    "verifier_failed_no_reward",
    "verification_disabled_no_reward",
    "official_verifier_solution_failure",
    "agent_timeout_before_solution_completion",
    "agent_budget_exhausted_before_solution_completion",
    "agent_refused_task",
    "agent_exception_before_solution_completion",
)
_LABEL_RANK = {label: i for i, label in enumerate(_LABEL_PRIORITY)}
_CAUSE_LABEL = {
    "sandbox_failed": "environment_setup_failed_before_worker",
    "model_provider_failed": "model_provider_failure_before_solution_attempt",
    "harbor_failed": "runner_internal_failure",
    "agent_exhausted_budget": "agent_budget_exhausted_before_solution_completion",
    "agent_refused_task": "agent_refused_task",
    "verifier_failed": "verifier_failed_no_reward",
    "cancelled": "run_cancelled",
}
_EXCEPTION_LABEL = {
    "AgentSetupTimeoutError": "agent_setup_timeout_before_worker_start",
    "NonZeroAgentExitCodeError": "agent_process_nonzero_exit_before_solution_attempt",
    "AgentTimeoutError": "agent_timeout_before_solution_completion",
}


# --------------------------------------------------------------------------- job status


def _job_status(
    job_result: _Json, observed: list[_Attempt], owed: list[_Attempt], has_trial_dirs: bool
) -> str:
    """docs/formats/harbor.md §5.2, first match wins."""
    if job_result.state == "corrupt":
        return "corrupt"
    if job_result.state == "missing":
        return "incomplete" if has_trial_dirs else "not_started"
    stats = _dict(job_result.obj.get("stats"))
    cancelled = _number(stats.get("n_cancelled_trials")) or 0
    if cancelled > 0 or any(a.exception_type == "CancelledError" for a in observed):
        return "cancelled"
    if job_result.obj.get("finished_at") is None:
        return "running"
    if owed or any(a.result.state == "missing" for a in observed):
        return "incomplete"
    return "completed"


_UNFINISHED = frozenset({"pending", "running", "result_missing"})


def _case_status(attempts: list[_Attempt], job_status: str, job_running: bool) -> str:
    """A record's own ``run_status``, from its attempts (docs/formats/harbor.md §3, §5.7).

    ``cancelled`` when an attempt was; else, when an attempt has no result, ``running`` while
    the job's ``finished_at`` is still null and ``incomplete`` otherwise; else ``completed`` (a
    corrupt trial result counts as present). A job that never started a trial leaves its
    cases ``not_started``. The job's own status stays in ``runner_job.job_status``, so a job
    that was interrupted never voids the cases that did finish (issue 31 item 6).
    """
    if job_status == "not_started":
        return "not_started"
    statuses = {a.status for a in attempts}
    if "cancelled" in statuses:
        return "cancelled"
    if statuses & _UNFINISHED:
        return "running" if job_running else "incomplete"
    return "completed"


def _attempt_status(attempt: _Attempt, job_status: str) -> str:
    if attempt.dir_name is None:
        return (
            "pending" if job_status in ("running", "not_started", "cancelled") else "result_missing"
        )
    if attempt.result.state == "corrupt":
        return "result_corrupt"
    if attempt.result.ok:
        return "cancelled" if attempt.exception_type == "CancelledError" else "completed"
    return "running" if job_status == "running" else "result_missing"


# --------------------------------------------------------------------------- benchmark ids


class _BenchmarkIds:
    """Attempt source -> ``name@version`` from the config's datasets (§5.3.4), cached."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.datasets = [_dict(d) for d in config.get("datasets") or []]
        self.cache: dict[str | None, str] = {}

    def __call__(self, source: str | None) -> str:
        if source not in self.cache:
            self.cache[source] = self._resolve(source)
        return self.cache[source]

    def _resolve(self, source: str | None) -> str:
        if source is None:
            return "harbor-adhoc"
        for ds in self.datasets:
            name = _text(ds.get("name"))
            if name == source or (name and _last_segment(ds.get("path")) == source):
                for suffix in ("version", "ref"):
                    if _text(ds.get(suffix)):
                        return f"{name}@{ds[suffix]}"
                return name
        return source


# --------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class _Scored:
    """What an attempt contributes to the case score."""

    reward: dict[str, float | int]
    primary: float | None
    primary_key: str | None
    reason: str | None
    cause: str | None
    label: str | None


def _primary_reward(rewards: dict[str, Any] | None) -> tuple[float | None, str | None, str | None]:
    """(value, key, unscored reason) from a reward map (docs/formats/harbor.md §5.4)."""
    if not rewards:
        return None, None, None
    if len(rewards) == 1:
        key = next(iter(rewards))
    elif "reward" in rewards:
        key = "reward"
    else:
        return None, None, "multi_key_reward_without_reward_key"
    value = _number(rewards[key])
    if value is None:
        return None, key, "non_numeric_reward"
    return float(value), key, None


def _unscored_reason(attempt: _Attempt, cause: str | None, reward_reason: str | None) -> str:
    status = attempt.status
    if status == "pending":
        return "trial_pending"
    if status == "running":
        return "trial_running"
    if status == "result_missing":
        return "trial_result_missing"
    if status == "result_corrupt":
        return "trial_result_corrupt"
    if status == "cancelled":
        return "trial_cancelled"
    if _dict(attempt.config.get("verifier")).get("disable") is True:
        return "verification_disabled"
    if cause == "verifier_failed":
        return "verifier_failed"
    if attempt.exception_type and not attempt.rewards:
        return "exception_before_verification"
    return reward_reason or "reward_missing"


def _attribution(
    exception: str | None, cause: str | None, primary: float | None, reason: str | None
) -> str | None:
    """The attempt's attribution label (docs/formats/harbor.md §5.8); None for a non-zero clean
    score."""
    if exception:
        return _EXCEPTION_LABEL.get(exception) or _CAUSE_LABEL.get(
            cause or "", "agent_exception_before_solution_completion"
        )
    if reason == "verification_disabled":
        return "verification_disabled_no_reward"
    if primary == 0.0:
        return "official_verifier_solution_failure"
    return None


def _score(attempt: _Attempt) -> _Scored:
    exception = attempt.exception_type
    cause = (_CAUSE_OF.get(exception, "unclassified")) if exception else None
    rewards = attempt.rewards if attempt.result.ok else None
    reward = {k: v for k, v in rewards.items() if _number(v) is not None} if rewards else {}
    primary, key, reward_reason = _primary_reward(rewards)
    reason = None if primary is not None else _unscored_reason(attempt, cause, reward_reason)
    return _Scored(
        reward, primary, key, reason, cause, _attribution(exception, cause, primary, reason)
    )
