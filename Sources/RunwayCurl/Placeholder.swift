enum Placeholder {}
