"""LangGraph Python on the checkpointkit saver bridge (see ../../PROTOCOL.md)."""
