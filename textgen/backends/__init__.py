"""Model backends: the Protocol (:mod:`.base`), llama.cpp for GGUF files and the default model
(:mod:`.llama_cpp`), local Hugging Face models (:mod:`.transformers_backend`), upstream servers
(:mod:`.openai_compatible`) and the n-gram test double (:mod:`.builtin`)."""

from textgen.backends.base import Backend, ModelInfo, Registry

__all__ = ["Backend", "ModelInfo", "Registry"]
