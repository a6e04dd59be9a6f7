"""Model backends: the Protocol (:mod:`.base`) and the built-in n-gram model (:mod:`.builtin`)."""

from textgen.backends.base import Backend, ModelInfo, Registry

__all__ = ["Backend", "ModelInfo", "Registry"]
