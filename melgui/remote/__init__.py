"""A project folder on another machine: the loop and the model connection stay here, the
tool calls run in a melgui host there, over ssh's (or a container exec's) stdio."""
