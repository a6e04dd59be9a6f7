"""A backend's exact context-window count refuses a request before any output: a streamed request
too long for the model is a plain 400, not a 200 whose stream ends in an error event."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar.testing import TestClient

from textgen.app import create_app
from textgen.backends.base import BackendError, GenerationRequest, ModelInfo
from textgen.settings import Settings

sys.path.insert(0, str(Path(__file__).parent))
from fake_backends import EchoBackend


class TightTemplateBackend(EchoBackend):
    """Its chat template costs more than the server's per-message estimate: the exact count refuses."""

    info = ModelInfo(id="tight-test", context_window=64, max_output_tokens=64)

    def validate(self, request: GenerationRequest) -> None:
        if "long" in request.messages[-1].text:
            raise BackendError("This model's maximum context length is 64 tokens.", 400, "context_length_exceeded")


@pytest.fixture
def http(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(Settings(data_dir=str(tmp_path), api_keys=("k",), rate_limit_per_minute=0),
                     backends=[TightTemplateBackend()])
    with TestClient(app) as client:
        client.headers["Authorization"] = "Bearer k"
        yield client


@pytest.mark.parametrize("stream", [False, True])
def test_too_long_for_the_template_is_a_400_before_any_output(http: TestClient, stream: bool) -> None:
    r = http.post("/v1/responses", json={"model": "tight-test", "input": "a long question", "stream": stream,
                                         "max_output_tokens": 8})
    assert r.status_code == 400 and r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert (error["code"], error["param"], error["type"]) == ("context_length_exceeded", "input",
                                                              "invalid_request_error")
    ok = http.post("/v1/responses", json={"model": "tight-test", "input": "short", "stream": stream,
                                          "max_output_tokens": 8})
    assert ok.status_code == 200


def test_counting_input_tokens_reserves_no_output(http: TestClient) -> None:
    r = http.post("/v1/responses/input_tokens", json={"model": "tight-test", "input": "a long question"})
    assert r.status_code == 200 and r.json()["input_tokens"] > 0
