"""The offline models: the heuristic baseline, the scripted model (a task's reference), the
healer (follows a plan). No network, labelled as what they are wherever their results appear."""
