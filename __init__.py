"""fleet-assignor: plans Kafka Streams task assignments (KIP-924) for a fleet of applications.

The installed package maps the repository's top-level folders: `fleet_assignor.assignor` (the pure-Python
core), `fleet_assignor.jobs` (the Spark job), `fleet_assignor.schemas`, `fleet_assignor.explore`; the job's
defaults ship as `fleet_assignor/conf/defaults.toml`.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("fleet-assignor")
except _metadata.PackageNotFoundError:  # a source tree shipped without its metadata (--py-files)
    __version__ = "unknown"
