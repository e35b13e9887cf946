"""The prompt box and what it offers: attachments, images, the `/` and `@` pickers."""
