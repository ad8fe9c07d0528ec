"""refengine's comparison scenarios written for LangGraph Python.

Each scenario drives a LangGraph Python graph, checkpointed by a
:class:`checkpointkit_bridge.recorder.RecordingSaver`, the way the Go
scenario of the same name drives refengine (same graph, thread ID, inputs
and calls). ``python -m scenarios.run`` runs them and prints the recorded
traces; ``TestAgainstLangGraphPython`` in refengine/enginetest compares
them with refengine's.
"""
