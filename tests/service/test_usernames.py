"""Usernames are one per person whatever the Unicode form or case; a password never holds one."""

from __future__ import annotations

import uuid

import pytest

from service.auth.services import authenticate, check_password, create_user
from service.errors import ValidationError
from tests.service.conftest import Api

PASSWORD = "plankton meridian 42"


@pytest.mark.parametrize(
    "twin",
    [
        "\uff42\uff4f\uff42{tag}",  # full-width letters: NFKC makes them ASCII
        "BOB{tag}",
        " Bob{tag} ",
        "\uff22\uff4f\uff42{tag}",  # full-width, another case
    ],
)
def test_a_username_in_another_form_is_taken(api: Api, twin: str) -> None:
    _twin_is_taken(api, "bob{tag}", twin)


@pytest.mark.parametrize(
    ("name", "twin"),
    [
        ("\u00c9lise{tag}", "\u00e9lise{tag}"),  # E acute: SQLite's lower() folds ASCII only
        ("\u00e9lise{tag}", "\u00c9LISE{tag}"),
        ("\u0411\u043e\u0440\u0438\u0441{tag}", "\u0431\u043e\u0440\u0438\u0441{tag}"),  # Cyrillic
        ("E\u0301lise{tag}", "\u00e9lise{tag}"),  # a combining accent: NFKC composes it
    ],
)
def test_a_non_ascii_username_in_another_case_is_taken(api: Api, name: str, twin: str) -> None:
    _twin_is_taken(api, name, twin)


def _twin_is_taken(api: Api, name: str, twin: str) -> None:
    """``twin`` cannot register beside ``name``; both sign in as the one user, whose
    name keeps the form it registered with."""
    tag = uuid.uuid4().hex[:8]
    first = api.call(create_user, api.db, name.format(tag=tag), PASSWORD)
    with pytest.raises(ValidationError) as err:
        api.call(create_user, api.db, twin.format(tag=tag), PASSWORD)
    assert (err.value.field, err.value.code) == ("username", "unique")
    for form in (name, twin):  # each form signs in as the same user
        user = api.call(authenticate, api.db, form.format(tag=tag), PASSWORD)
        assert user.id == first.id and user.username == first.username


def test_full_width_names_are_stored_in_their_compatibility_form(api: Api) -> None:
    tag = uuid.uuid4().hex[:8]
    user = api.call(create_user, api.db, f"\uff41\uff4c\uff49\uff43\uff45{tag}", PASSWORD)
    assert user.username == f"alice{tag}"


@pytest.mark.parametrize(
    ("password", "username"),
    [
        ("quixotic7", "quixotic7"),
        ("my-bobsmith-2024", "bobsmith"),
        ("MY-BOBSMITH-2024", "BobSmith"),
        ("\uff42\uff4f\uff42smith-rules", "bobsmith"),  # full-width in the password
        ("xx-bobsmith-xx", "\uff42\uff4f\uff42smith"),  # full-width in the name
    ],
)
def test_a_password_holding_the_username_is_refused(password: str, username: str) -> None:
    with pytest.raises(ValidationError) as err:
        check_password(password.ljust(8, "!"), username)
    assert err.value.code == "similar_to_username"


def test_a_short_username_may_appear_inside_a_password() -> None:
    check_password("totally unrelated words", "al")  # "al" is inside "totally": allowed


async def _upgrade_with(url: str, names: list[str]) -> list[tuple[str, str]]:
    """Users inserted at revision 0010 (as the database held them), then the upgrade."""
    from sqlalchemy import text

    from service.db import Database, migrate

    db = Database(url)
    try:
        await migrate(db, "0010")
        async with db.engine.begin() as conn:
            for name in names:
                await conn.execute(
                    text("INSERT INTO users (username, password_hash, is_active, created_at) "
                         "VALUES (:n, 'x', true, CURRENT_TIMESTAMP)"), {"n": name},
                )  # fmt: skip
        await migrate(db)
        async with db.engine.connect() as conn:
            rows = await conn.execute(text("SELECT username, username_key FROM users ORDER BY id"))
            return [(a, b) for a, b in rows.tuples()]
    finally:
        await db.dispose()


def test_the_migration_keys_every_user_and_stops_at_twins(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    url = f"sqlite+aiosqlite:///{tmp_path / 'keys.db'}"
    assert asyncio.run(_upgrade_with(url, ["\u00c9lise", "Bob"])) == [
        ("\u00c9lise", "\u00e9lise"), ("Bob", "bob")]  # fmt: skip
    # SQLite's lower(username) index let both in before: the upgrade names them
    twins = f"sqlite+aiosqlite:///{tmp_path / 'twins.db'}"
    with pytest.raises(RuntimeError, match="\u00c9lise"):
        asyncio.run(_upgrade_with(twins, ["\u00c9lise", "\u00e9lise"]))
