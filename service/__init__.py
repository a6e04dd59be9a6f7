"""The finance service: a Litestar application over :mod:`quantcore`."""
