"""A request without ``temperature``/``top_p`` samples at the model's recommended settings, shown by
``GET /v1/models/{id}``; a request's own values always win."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from litestar.testing import TestClient

from textgen.app import create_app
from textgen.backends.base import GenerationRequest, ModelInfo
from textgen.backends.registry_config import (
    SMOLLM2_SAMPLING_SOURCE,
    TransformersEntry,
    default_entry,
    generation_config_sampling,
    parse_config,
)
from textgen.settings import Settings

sys.path.insert(0, str(Path(__file__).parent))
from fake_backends import EchoBackend


class RecordingBackend(EchoBackend):
    """An echo model with recommended sampling settings that records what it was asked."""

    info = ModelInfo(id="recommended-test", context_window=4096, max_output_tokens=256, temperature=0.2,
                     top_p=0.9, sampling_source="a model card")
    seen: ClassVar[list[GenerationRequest]] = []

    def validate(self, request: GenerationRequest) -> None:
        self.seen.append(request)


@pytest.fixture
def http(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(Settings(data_dir=str(tmp_path), api_keys=("k",), rate_limit_per_minute=0),
                     backends=[RecordingBackend(), EchoBackend()])
    with TestClient(app) as client:
        client.headers["Authorization"] = "Bearer k"
        yield client


def test_models_show_their_sampling_defaults(http: TestClient) -> None:
    model = http.get("/v1/models/recommended-test").json()
    assert model["sampling_defaults"] == {"temperature": 0.2, "top_p": 0.9, "source": "a model card"}
    plain = http.get("/v1/models/echo-test").json()
    assert plain["sampling_defaults"] == {"temperature": 1.0, "top_p": 1.0, "source": None}
    listed = {m["id"]: m["sampling_defaults"] for m in http.get("/v1/models").json()["data"]}
    assert listed["recommended-test"]["temperature"] == 0.2


@pytest.mark.parametrize(("sent", "used"), [
    ({}, (0.2, 0.9)),
    ({"temperature": 0}, (0.0, 0.9)),
    ({"top_p": 0.5}, (0.2, 0.5)),
    ({"temperature": 1.3, "top_p": 1.0}, (1.3, 1.0)),
])
def test_the_request_wins_else_the_recommended_settings(http: TestClient, sent: dict[str, float],
                                                        used: tuple[float, float]) -> None:
    RecordingBackend.seen.clear()
    r = http.post("/v1/responses", json={"model": "recommended-test", "input": "hi", **sent})
    assert r.status_code == 200
    assert (r.json()["temperature"], r.json()["top_p"]) == used  # echoed as used
    assert (RecordingBackend.seen[-1].temperature, RecordingBackend.seen[-1].top_p) == used


def test_a_model_without_recommendations_samples_at_one(http: TestClient) -> None:
    r = http.post("/v1/responses", json={"model": "echo-test", "input": "hi"}).json()
    assert (r["temperature"], r["top_p"]) == (1.0, 1.0)


def test_the_default_model_carries_the_model_card_settings() -> None:
    entry = default_entry()
    assert (entry.temperature, entry.top_p) == (0.2, 0.9)
    assert "SmolLM2-135M-Instruct" in SMOLLM2_SAMPLING_SOURCE


def test_registry_entries_and_generation_config(tmp_path: Path) -> None:
    config = parse_config({"builtin": False, "models": {"m-2026-01-01": {
        "backend": "llama_cpp", "path": "/x.gguf", "context_window": 64, "temperature": 0.6, "top_p": 0.95}}})
    entry = config.models["m-2026-01-01"]
    assert (entry.temperature, entry.top_p) == (0.6, 0.95)
    (tmp_path / "generation_config.json").write_text(json.dumps({"do_sample": True, "temperature": 0.7,
                                                                 "top_p": 0.8, "eos_token_id": 2}))
    assert generation_config_sampling(str(tmp_path)) == (0.7, 0.8)
    assert generation_config_sampling(str(tmp_path / "missing")) == (None, None)
    assert isinstance(TransformersEntry(path=str(tmp_path), context_window=64), TransformersEntry)
    with pytest.raises(Exception, match="temperature"):
        parse_config({"builtin": False, "models": {"m": {"backend": "llama_cpp", "path": "/x", "context_window": 8,
                                                          "temperature": 5}}})
