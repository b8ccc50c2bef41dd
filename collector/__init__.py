"""tf-collect: gathers a TensorFusion support bundle from a cluster."""

from tf_support_schemas import TOOL_VERSION as __version__

__all__ = ["__version__"]
