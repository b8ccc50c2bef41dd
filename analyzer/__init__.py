"""tf-analyze: turns a TensorFusion support bundle into a report, with no cluster."""

from tf_support_schemas import TOOL_VERSION as __version__

__all__ = ["__version__"]
