"""The window's side of remote folders and hosts: ssh's questions, the link's state in
the status bar, File → Open remote folder…, and the hook that puts it all in place."""
