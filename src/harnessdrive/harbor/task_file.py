"""A Harbor ``task.toml`` (schema 1.4), read leniently: the fields we map are checked, the rest
kept aside, and each feature we cannot honour is a reason to refuse the task."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class HarborPackage(_Lenient):
    name: str = ""
    description: str = ""


class HarborAgent(_Lenient):
    timeout_sec: float | None = Field(default=None, gt=0)


class HarborVerifier(_Lenient):
    timeout_sec: float | None = Field(default=None, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    environment_mode: str | None = None


class HarborEnvironment(_Lenient):
    docker_image: str | None = None
    os: str | None = None
    cpus: float | None = Field(default=None, gt=0)
    memory_mb: int | None = Field(default=None, gt=0)
    storage_mb: int | None = Field(default=None, gt=0)
    gpus: int = 0
    gpu_types: list[str] = Field(default_factory=list)
    tpu: Any = None
    mcp_servers: list[Any] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str | None = None
    allow_internet: bool = False


class HarborTaskFile(_Lenient):
    schema_version: str | None = None
    version: str | None = None
    task: HarborPackage = HarborPackage()
    metadata: dict[str, Any] = Field(default_factory=dict)
    agent: HarborAgent = HarborAgent()
    verifier: HarborVerifier = HarborVerifier()
    environment: HarborEnvironment = HarborEnvironment()
    steps: list[Any] = Field(default_factory=list)

    def unsupported(self) -> list[str]:
        """Why this task cannot run here, one reason each (empty: it can)."""
        env = self.environment
        reasons = []
        if env.gpus or env.gpu_types:
            reasons.append("it asks for GPUs")
        if env.tpu:
            reasons.append("it asks for a TPU")
        if env.mcp_servers:
            reasons.append("it needs MCP servers")
        if env.os and env.os.lower() not in ("linux", ""):
            reasons.append(f"its environment runs {env.os}, not Linux")
        if len(self.steps) > 1:
            reasons.append("it has several steps (multi-step tasks)")
        if self.verifier.environment_mode == "separate":
            reasons.append("its verifier wants an environment of its own")
        return reasons
