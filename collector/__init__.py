"""tf-collect: gathers a TensorFusion support bundle from a cluster."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tf-support")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
