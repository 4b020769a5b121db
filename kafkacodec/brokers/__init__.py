"""Several brokers' disks as one cluster: a layer above `log/` (which reads one log.dirs)
and `internal/` (whose cluster.py folds the metadata log this layer reads), below the
command line and the Spark pipeline.

    from kafkacodec.brokers import open_disks, compare_all
    from kafkacodec.log import open_log
    disks = open_disks([open_log(p) for p in ("b1/kafka-logs", "b2/kafka-logs", "b3/kafka-logs")])
    disks.served()          # one Partition per partition: the replica Kafka would serve
    compare_all(disks)      # each replica in sync, lagging or diverged, and where Kafka cuts it
"""

from .compare import PartitionReport, ReplicaReport, compare, compare_all
from .disks import HIGH_WATERMARKS, Disks, LogDir, PartitionReplicas, Replica, SetApart, open_disks
from .epochs import EpochCache, LogEnds, Rejoin, rejoin
from .meta import META_PROPERTIES, MetaProperties, java_properties, read_meta_properties

__all__ = [
    "open_disks", "Disks", "LogDir", "Replica", "PartitionReplicas", "SetApart", "HIGH_WATERMARKS",
    "compare", "compare_all", "PartitionReport", "ReplicaReport", "EpochCache", "LogEnds", "Rejoin",
    "rejoin", "MetaProperties", "read_meta_properties", "java_properties", "META_PROPERTIES",
]  # fmt: skip
