"""Rules 1-4 of the text-generation document, and the reusable-prompt endpoints.

The ``echo-test`` backend answers with the context it was given, one
``role: text`` line per entry (instructions first), so each rule is checked on
exactly what the model saw.
"""

from __future__ import annotations

import httpx
import openai

ECHO = "echo-test"


def create_prompt(http: httpx.Client, **body: object) -> dict[str, object]:
    response = http.post("/prompts", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_rule_1_instructions_take_priority_over_input(client: openai.OpenAI) -> None:
    r = client.responses.create(
        model=ECHO,
        instructions="Answer in French.",
        input=[{"role": "developer", "content": "Answer in German."}, {"role": "user", "content": "Hello"}],
    )
    lines = r.output_text.splitlines()
    # Instructions lead the context in the system slot, above every developer and user message.
    assert lines == ["system: Answer in French.", "developer: Answer in German.", "user: Hello"]
    assert r.instructions == "Answer in French."


def test_rule_2_previous_instructions_do_not_carry_over(client: openai.OpenAI) -> None:
    first = client.responses.create(model=ECHO, instructions="Be terse.", input="Q1")
    second = client.responses.create(model=ECHO, previous_response_id=first.id, input="Q2")
    # The context is: turn 1's input, turn 1's output (which quotes what it saw), turn 2's input.
    # No context entry is turn 1's instructions.
    assert second.output_text.splitlines() == ["user: Q1", "assistant: system: Be terse.", "user: Q1", "user: Q2"]
    assert second.instructions is None
    third = client.responses.create(model=ECHO, previous_response_id=second.id, instructions="Be kind.", input="Q3")
    lines = third.output_text.splitlines()
    assert lines[0] == "system: Be kind." and "system: Be terse." not in lines
    assert lines[1] == "user: Q1" and lines[-1] == "user: Q3"


def test_rule_3_current_version_applies_when_version_is_omitted(client: openai.OpenAI, http: httpx.Client) -> None:
    prompt = create_prompt(http, template="Version one about {{topic}}.")
    pid = str(prompt["id"])
    assert prompt["version"] == "1" and pid.startswith("pmpt_")
    v2 = http.post(f"/prompts/{pid}/versions", json={"template": "Version two about {{topic}}."}).json()
    assert v2["version"] == "2" and v2["current_version"] == "2"
    current = client.responses.create(model=ECHO, prompt={"id": pid, "variables": {"topic": "rain"}})
    assert current.output_text == "developer: Version two about rain."
    assert current.prompt is not None and current.prompt.version == "2"
    pinned = client.responses.create(model=ECHO, prompt={"id": pid, "version": "1", "variables": {"topic": "rain"}})
    assert pinned.output_text == "developer: Version one about rain."
    assert pinned.prompt is not None and pinned.prompt.version == "1"
    # Versions are immutable: version 1 still reads back unchanged.
    assert http.get(f"/prompts/{pid}", params={"version": "1"}).json()["template"] == "Version one about {{topic}}."
    assert http.get(f"/prompts/{pid}").json()["version"] == "2"


def test_rule_4_variables_replace_placeholders(client: openai.OpenAI, http: httpx.Client) -> None:
    prompt = create_prompt(
        http,
        template=[
            {"role": "developer", "content": "You help {{ customer }} with {{product}}."},
            {"role": "user", "content": "Question: {{question}} ({{product}})"},
        ],
        instructions="Be precise.",
    )
    assert prompt["variables"] == ["customer", "product", "question"]
    r = client.responses.create(
        model=ECHO,
        prompt={"id": str(prompt["id"]), "variables": {
            "customer": "Ada", "product": {"type": "input_text", "text": "bonds"}, "question": "yield?"}},
        input="Thanks!",
    )
    assert r.output_text.splitlines() == [
        "system: Be precise.",
        "developer: You help Ada with bonds.",
        "user: Question: yield? (bonds)",
        "user: Thanks!",
    ]
    assert "{{" not in r.output_text and r.instructions == "Be precise."


def test_prompt_variable_can_be_a_file(client: openai.OpenAI, http: httpx.Client) -> None:
    f = client.files.create(file=("data.csv", b"x,y\n1,2\n"), purpose="user_data")
    prompt = create_prompt(http, template="Read {{table}} and summarise.")
    r = client.responses.create(
        model=ECHO, prompt={"id": str(prompt["id"]), "variables": {"table": {"type": "input_file", "file_id": f.id}}}
    )
    assert r.output_text == "developer: Read \n[file data.csv]\nx,y\n1,2\n\n and summarise."
    items = client.responses.input_items.list(r.id, order="asc").data
    assert [p.type for p in items[0].content] == ["input_text", "input_file", "input_text"]  # type: ignore[union-attr]


def test_request_instructions_override_the_prompts(client: openai.OpenAI, http: httpx.Client) -> None:
    prompt = create_prompt(http, template="T", instructions="From the prompt.")
    r = client.responses.create(model=ECHO, prompt={"id": str(prompt["id"])}, instructions="From the request.")
    assert r.output_text.splitlines()[0] == "system: From the request."


def test_list_prompts(http: httpx.Client) -> None:
    made = create_prompt(http, name="listed-prompt", template="hello")
    listed = http.get("/prompts").json()
    assert listed["object"] == "list"
    entry = next(p for p in listed["data"] if p["id"] == made["id"])
    assert entry["name"] == "listed-prompt" and entry["version"] == "1"


def test_truncation_auto_drops_the_oldest_turns(client: openai.OpenAI, http: httpx.Client) -> None:
    first = client.responses.create(model=ECHO, input="word " * 2500)  # echo-test's window is 4096
    body = {"model": ECHO, "input": "hi", "previous_response_id": first.id}
    refused = http.post("/responses", json=body)
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "context_length_exceeded"
    kept = client.responses.create(model=ECHO, input="hi", previous_response_id=first.id, truncation="auto")
    lines = kept.output_text.splitlines()
    assert lines[0].startswith("assistant: user: word") and lines[-1] == "user: hi" and len(lines) == 2
    assert kept.truncation == "auto"


def test_error_params_count_input_items_apart_from_prompt_messages(http: httpx.Client) -> None:
    prompt = create_prompt(http, template=[{"role": "developer", "content": "a"}, {"role": "user", "content": "b"}])
    body = {"model": ECHO, "prompt": {"id": prompt["id"]},
            "input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-none"}]}]}
    error = http.post("/responses", json=body).json()["error"]
    assert error["param"] == "input[0].content[0].file_id"
