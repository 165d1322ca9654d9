"""What a save does before the write: contents or a conversation in, memories ready to write out.

``contents`` embeds, finds related memories and judges plain contents; ``conversations``
turns a transcript's turns into facts; ``messages`` checks a message list and cuts it
into turns and batches.
"""
