"""The interpreters behind the transformations; each owns the rule table it reads."""
