"""The messages of ``/ws/realtime/``: JSON objects told apart by their ``type``.

Client to server (:data:`ClientMessage`, decoded by :data:`decoder`): ``ping``,
``subscribe_asset`` / ``unsubscribe_asset`` (``symbol``), ``subscribe_assets``
(``symbols``), ``subscribe_portfolio`` /
``unsubscribe_portfolio`` (``portfolio_id``).

Server to client (:data:`ServerMessage`, encoded by :func:`encode`): ``pong``,
``subscribed``, ``unsubscribed``, ``price_update``, ``portfolio_update``, ``error``.
Money, prices and percentages are decimal strings, as in the REST API.

Example:
    >>> decode('{"type": "subscribe_asset", "symbol": "spy"}')
    SubscribeAsset(symbol='spy')
    >>> encode(Error(error="unknown_symbol", message="Unknown symbol 'XYZ'."))
    b'{"type":"error","error":"unknown_symbol","message":"Unknown symbol \\'XYZ\\'."}'
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

__all__ = [
    "CLIENT_TYPES",
    "MESSAGE_TYPES",
    "SERVER_TYPES",
    "ClientMessage",
    "Error",
    "MessageError",
    "Ping",
    "Pong",
    "PortfolioUpdate",
    "PriceUpdate",
    "ServerMessage",
    "SubscribeAsset",
    "SubscribeAssets",
    "SubscribePortfolio",
    "Subscribed",
    "UnsubscribeAsset",
    "UnsubscribePortfolio",
    "Unsubscribed",
    "decode",
    "decoder",
    "encode",
]

Symbol = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
#: Portfolio ids are SQL INTEGERs (32-bit on PostgreSQL): a larger number names no
#: portfolio and is refused on decoding (``invalid_message``), never sent to the database.
PortfolioId = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]


class _In(msgspec.Struct, tag_field="type", kw_only=True, forbid_unknown_fields=True):
    """Base of client messages (unknown fields are an error)."""


class _Out(msgspec.Struct, tag_field="type", kw_only=True, omit_defaults=True):
    """Base of server messages."""


# -- client -> server ------------------------------------------------------------------


class Ping(_In, tag="ping"):
    """client -> server: health check; the server answers `pong`."""


class SubscribeAsset(_In, tag="subscribe_asset"):
    """client -> server: subscribe to asset price updates, `{symbol}`; anonymous allowed."""

    symbol: Symbol


#: Most symbols in one ``subscribe_assets`` (a watchlist of a whole universe).
MAX_SYMBOLS_PER_MESSAGE = 500


class SubscribeAssets(_In, tag="subscribe_assets"):
    """client -> server: subscribe to the price updates of a list, `{symbols: [...]}` (up to 500, all or none); anonymous allowed."""

    symbols: Annotated[list[Symbol], msgspec.Meta(min_length=1, max_length=MAX_SYMBOLS_PER_MESSAGE)]


class UnsubscribeAsset(_In, tag="unsubscribe_asset"):
    """client -> server: stop the price updates of `{symbol}`."""

    symbol: Symbol


class SubscribePortfolio(_In, tag="subscribe_portfolio"):
    """client -> server: subscribe to portfolio value updates, `{portfolio_id}`; your own portfolios only."""

    portfolio_id: PortfolioId


class UnsubscribePortfolio(_In, tag="unsubscribe_portfolio"):
    """client -> server: stop the value updates of `{portfolio_id}`."""

    portfolio_id: PortfolioId


ClientMessage = (
    Ping
    | SubscribeAsset
    | SubscribeAssets
    | UnsubscribeAsset
    | SubscribePortfolio
    | UnsubscribePortfolio
)

# -- server -> client ------------------------------------------------------------------

Channel = Literal["asset", "portfolio"]


class Pong(_Out, tag="pong"):
    """server -> client: answer to `ping`, `{timestamp}` (server time, UTC)."""

    timestamp: dt.datetime


class Subscribed(_Out, tag="subscribed"):
    """server -> client: a subscription is active, `{channel: asset, symbol}` or `{channel: portfolio, portfolio_id}`."""

    channel: Channel
    symbol: str | None = None
    portfolio_id: int | None = None


class Unsubscribed(_Out, tag="unsubscribed"):
    """server -> client: a subscription has ended (same fields as `subscribed`)."""

    channel: Channel
    symbol: str | None = None
    portfolio_id: int | None = None


class PriceUpdate(_Out, tag="price_update"):
    """server -> client: a new price, `{symbol, price, change, change_percent, volume, timestamp}` (decimal strings)."""

    symbol: str
    price: str
    change: str
    change_percent: str
    volume: int
    timestamp: dt.datetime


class PortfolioUpdate(_Out, tag="portfolio_update"):
    """server -> client: a new portfolio value, `{portfolio_id, total_value, daily_change, daily_change_percent, timestamp}`."""

    portfolio_id: int
    total_value: str
    daily_change: str
    daily_change_percent: str
    timestamp: dt.datetime


class Error(_Out, tag="error"):
    """server -> client: a message was refused, `{error, message}`; the connection stays open unless closed with 1008/1009."""

    error: str
    message: str


ServerMessage = Pong | Subscribed | Unsubscribed | PriceUpdate | PortfolioUpdate | Error


def _tag(cls: type[msgspec.Struct]) -> str:
    return str(cls.__struct_config__.tag)


def _summary(cls: type[msgspec.Struct]) -> str:
    return " ".join((cls.__doc__ or "").split())


CLIENT_TYPES: tuple[type[_In], ...] = (
    Ping,
    SubscribeAsset,
    SubscribeAssets,
    UnsubscribeAsset,
    SubscribePortfolio,
    UnsubscribePortfolio,
)
SERVER_TYPES: tuple[type[_Out], ...] = (
    Pong,
    Subscribed,
    Unsubscribed,
    PriceUpdate,
    PortfolioUpdate,
    Error,
)

#: Every message type and what it means (served by ``GET /realtime/websocket-info/``).
MESSAGE_TYPES: dict[str, str] = {_tag(c): _summary(c) for c in (*CLIENT_TYPES, *SERVER_TYPES)}

#: The one decoder of client messages.
decoder: msgspec.json.Decoder[ClientMessage] = msgspec.json.Decoder(ClientMessage)
_encoder = msgspec.json.Encoder()
_CLIENT_TAGS = frozenset(_tag(c) for c in CLIENT_TYPES)
_probe = msgspec.json.Decoder(dict[str, object])


class MessageError(ValueError):
    """A client message that cannot be used; ``code`` is the ``error`` of the reply."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def decode(data: str | bytes) -> ClientMessage:
    """Decode one client message.

    Raises:
        MessageError: ``invalid_json`` (not a JSON object), ``unknown_type`` (missing or
            unknown ``type``) or ``invalid_message`` (a field is missing, unknown or
            of the wrong type; the message names it).
    """
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        error = exc
    except msgspec.DecodeError:
        raise MessageError("invalid_json", "Messages must be JSON objects.") from None
    try:
        probe = _probe.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise MessageError("invalid_json", "Messages must be JSON objects.") from None
    kind = probe.get("type")
    if not isinstance(kind, str) or kind not in _CLIENT_TAGS:
        known = ", ".join(sorted(_CLIENT_TAGS))
        raise MessageError(
            "unknown_type", f"Unknown message type {kind!r}; expected one of {known}."
        )
    raise MessageError("invalid_message", f"Invalid {kind} message: {error}.")


def encode(message: ServerMessage) -> bytes:
    """The JSON bytes of one server message."""
    return _encoder.encode(message)
