"""Language-model backends behind one `ChatModel` protocol."""
