"""create_pdf and the engines that render it."""
