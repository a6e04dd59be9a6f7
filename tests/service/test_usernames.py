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
    tag = uuid.uuid4().hex[:8]
    api.call(create_user, api.db, f"bob{tag}", PASSWORD)
    with pytest.raises(ValidationError) as err:
        api.call(create_user, api.db, twin.format(tag=tag), PASSWORD)
    assert (err.value.field, err.value.code) == ("username", "unique")
    # and the other form signs in as the same user
    user = api.call(authenticate, api.db, twin.format(tag=tag), PASSWORD)
    assert user.username == f"bob{tag}"


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
