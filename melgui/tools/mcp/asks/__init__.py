"""What a server asks of the client during a session: input from the person, a model's
answer (sampling), each tied to the call it came during."""
