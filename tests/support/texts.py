"""Small scenario texts that more than one test module replays."""

# An executed payment that is still IN: approving its recall is a dynamic error on line 4.
APPROVE_WITHOUT_DRAFT = "\n".join([
    '{"op":"source","id":"s","kind":"portal"}',
    '{"op":"observe","id":"o","source":"s","text":"x","at":"2026-01-01T00:00:00Z"}',
    '{"op":"act","id":"a","agent":"p","text":"pay","premises":["o"],'
    '"at":"2026-01-01T00:00:00Z","amount":5,"executed":true}',
    '{"op":"approve","action":"a","by":"fin"}',
])
