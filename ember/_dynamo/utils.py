"""torch._dynamo.utils.counters: what captures happened (`counters["stats"]`)."""
import collections

__all__ = ["counters"]

counters = collections.defaultdict(collections.Counter)
