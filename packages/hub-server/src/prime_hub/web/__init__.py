"""Server-rendered web pages: browse, read and compare environments without JavaScript."""
