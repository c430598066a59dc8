"""The parse corpus: released raw judge outputs with the publishers' own parse, plus hand-written hard cases."""
