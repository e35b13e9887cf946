"""What both network transports share: the SSE decoder, the leg runner, reply and
error texts, and the streamed tool-call assembler."""
