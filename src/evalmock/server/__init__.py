"""The server: a thin Connexion adapter between the documents, the world and HTTP clients."""
