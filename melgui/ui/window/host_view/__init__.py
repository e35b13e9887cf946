"""The window as a view of a melgui host: the view and its attach (`view`), the main
conversation there (`main_conversation`), and what the window does when that host ends
(`host_end`)."""
