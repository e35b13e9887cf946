"""What every side shares of asyncio and the operating system: deadlines, child
processes' groups and their reaping, and the desktop's notification bus."""
