"""A call drawn as two lanes: the pure model and layout (:mod:`.lanes`) that the
terminal's lanes and the HTML report's SVG timeline share."""
