"""What every view runs on: asyncio inside Qt, the render thread, the bridge, the theme."""
